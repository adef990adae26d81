"""A plan's change as text: AWS CLI commands, a CloudFormation snippet, a Terraform snippet, or the
JSON request bodies (`audit plans show ID --as ...`). Reads the plan as stored (plan_to_dict's JSON).

Every value comes from AWS or the config (tag values are anyone's text): the CLI commands quote them
for a POSIX shell, the YAML and HCL write them as escaped double-quoted strings, never bare.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from typing import Any

FORMATS = ("cli", "cloudformation", "terraform", "json")
# A job plan's change: the next run's request (recommend/job_change.py).
JOB_RUNS = ("CreateTrainingJob", "CreateProcessingJob", "CreateTransformJob")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")


def render_change(plan: dict[str, Any], as_: str) -> str:
    """The plan's change in one of FORMATS; a line saying why when it has none."""
    change = plan.get("change")
    risk = plan.get("risk") or {}
    if as_ == "json":
        return json.dumps({"id": plan.get("id"), "change": change, "risk": risk or None}, indent=2) + "\n"
    if not change:
        missing = ((plan.get("proposed") or {}).get("details") or {}).get("change_missing")
        return (f"# plan {_line(plan.get('id'))}: no change the auditor can express as AWS requests "
                f"({_line((plan.get('proposed') or {}).get('action'))} on {_line(plan.get('resource_type'))}"
                f"{': ' + _line(missing) if missing else ''}); see its advice\n")
    runs = [c["operation"] for c in change.get("calls") or [] if c.get("operation") in JOB_RUNS]
    if runs and as_ in ("cloudformation", "terraform"):
        # A job run is a request, not a resource a stack or a module keeps: nothing to declare.
        tool = "CloudFormation" if as_ == "cloudformation" else "Terraform"
        return (f"# plan {_line(plan.get('id'))}: {tool} has no resource for a one-off job run; its change is the "
                f"next run's {_line(runs[0])} request: see --as cli or --as json\n")
    renderer = {"cli": _cli, "cloudformation": _cloudformation, "terraform": _terraform}[as_]
    return renderer(plan, change, risk)


def plans_text(plans: list[dict[str, Any]]) -> str:
    """Every plan's row and its change as AWS CLI commands (the demo's plans.txt)."""
    if not plans:
        return "No plans.\n"
    return "\n".join(f"# {plan_line(p)}\n{render_change(p, 'cli')}" for p in plans)


def plan_line(plan: dict[str, Any]) -> str:
    """One row of `audit plans`: id, risk, saving, whether it has a change, and the advice."""
    risk = (plan.get("risk") or {}).get("level") or "-"
    where = f"{plan.get('endpoint')}{'/' + str(plan['variant']) if plan.get('variant') else ''}"
    advice = (plan.get("proposed") or {}).get("advice") or ""
    return _line(f"{plan.get('id') or ''!s:10}  {risk:6}  {float(plan.get('monthly_savings_usd') or 0):>13,.2f}  "
                 f"{'yes' if plan.get('change') else 'no':6}  {where} ({plan.get('region')}): {advice}")


def _line(value: Any) -> str:
    """One line of text for a comment: control characters (newlines) replaced."""
    return _CONTROL.sub(" ", str(value))


def _header(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any], comment: str) -> list[str]:
    proposed = plan.get("proposed") or {}
    lines = [f"{comment} plan {_line(plan.get('id'))}: {_line(plan.get('endpoint'))}"
             f"{'/' + _line(plan['variant']) if plan.get('variant') else ''} in {_line(plan.get('region'))}: "
             f"{_line(proposed.get('advice'))}",
             f"{comment} risk: {_line(risk.get('level', 'not assessed'))}; "
             f"rollback: {_line(change.get('rollback'))}"]
    for reason in risk.get("load_test_first") or []:
        lines.append(f"{comment} load-test first: {_line(reason)}")
    for fact in risk.get("basis") or []:  # what a level rests on where no replay applies
        lines.append(f"{comment} risk rests on: {_line(fact)}")
    if change.get("waits_for"):
        lines.append(f"{comment} then wait for {_line(change['waits_for'])}")
    return lines


def _kebab(operation: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", operation).lower()


def _cli(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any]) -> str:
    lines = _header(plan, change, risk, "#")
    region = str(plan.get("region") or "")
    request = risk.get("load_test_request")
    calls = ([request] if request else []) + list(change.get("calls") or [])
    for call in calls:
        lines.append(f"# {_line(call.get('purpose'))}")
        if call is request:
            lines.append("# (the load test: run it, read its recommendations, then apply the rest)")
        lines.append(f"aws {shlex.quote(call['service'])} {shlex.quote(_kebab(call['operation']))} "
                     f"--region {shlex.quote(region)} --cli-input-json "
                     f"{shlex.quote(json.dumps(call['params'], sort_keys=True))}")
    waiter = _WAITERS.get(str(plan.get("resource_type")))
    if change.get("waits_for") and plan.get("endpoint") and waiter:
        lines.append(f"aws sagemaker wait {waiter[0]} --region {shlex.quote(region)} "
                     f"{waiter[1]} {shlex.quote(str(plan['endpoint']))}")
    return "\n".join(lines) + "\n"


# The AWS CLI waiter (botocore's sagemaker waiters) for what a change waits for, by resource type;
# a Studio app and a HyperPod cluster have none (the CLI text says what to wait for in a comment).
_WAITERS = {"endpoint": ("endpoint-in-service", "--endpoint-name"),
            "notebook-instance": ("notebook-instance-stopped", "--notebook-instance-name")}

# Calls no CloudFormation or Terraform resource of the plan's own declares (one-off actions, or a
# setting of a resource the audit cannot declare whole): one line says so, nothing is declared.
_ONE_OFF = {
    "StopNotebookInstance": "stopping a notebook instance is a one-off action: {tool} declares no running or "
                            "stopped state for it",
    "DeleteApp": "stopping a Studio app (DeleteApp) is a one-off action with no {tool} equivalent",
    "BatchDeleteClusterNodes": "deleting named HyperPod nodes is a one-off action with no {tool} equivalent (a "
                               "declared instance count lets SageMaker choose which nodes end); if the cluster is "
                               "declared in {tool}, lower the group's instance count there to the plan's, or the "
                               "next apply adds nodes back",
    # Not one-off, but a domain cannot be declared from the request alone (it needs its VPC,
    # subnets and auth mode, which the audit does not read): say where the setting goes instead.
    "UpdateDomain": "where the domain is declared in {tool}, set its default user settings' AppLifecycleManagement."
                    "IdleSettings as in the request; no domain is declared here (it needs its VPC, subnets and auth "
                    "mode, which the audit does not read)",
}


def _one_off(operation: str, tool: str) -> str | None:
    text = _ONE_OFF.get(operation)
    return None if text is None else f"# {operation}: {text.format(tool=tool)}; the request: --as cli"


# CloudFormation: the resource each request stands for; its body is the resource's properties.
_CFN_TYPES = {"CreateEndpointConfig": "AWS::SageMaker::EndpointConfig", "UpdateEndpoint": "AWS::SageMaker::Endpoint",
              "PutMetricAlarm": "AWS::CloudWatch::Alarm",
              "RegisterScalableTarget": "AWS::ApplicationAutoScaling::ScalableTarget",
              "PutScalingPolicy": "AWS::ApplicationAutoScaling::ScalingPolicy"}


def _logical_id(*parts: Any) -> str:
    text = "".join(re.sub(r"[^A-Za-z0-9]", " ", str(p)).title().replace(" ", "") for p in parts)
    return text[:255] or "Resource"


def _cloudformation(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any]) -> str:
    lines = _header(plan, change, risk, "#")
    resources: dict[str, Any] = {}
    said: list[str] = []  # the one-off actions, one line each
    config_id = target_id = None
    alarm_ids: dict[str, str] = {}  # the alarms the plan defines: the endpoint refers to them (and waits for them)
    for index, call in enumerate(change.get("calls") or []):
        operation, params = call["operation"], dict(call["params"])
        if operation == "DeleteEndpoint":
            lines.append(f"# delete: remove the AWS::SageMaker::Endpoint of {_line(params.get('EndpointName'))} "
                         "from its stack and keep its AWS::SageMaker::EndpointConfig")
            continue
        kind = _CFN_TYPES.get(operation)
        if (one_off := _one_off(operation, "CloudFormation")) is not None:
            if one_off not in said:
                said.append(one_off)
            continue
        if kind is None:
            lines.append(f"# {_line(operation)}: no CloudFormation resource; see --as cli")
            continue
        logical = _logical_id(plan.get("id"), operation, index)
        if operation == "CreateEndpointConfig":
            config_id = logical
        elif operation == "PutMetricAlarm":
            alarm_ids[str(params.get("AlarmName"))] = logical
        elif operation == "UpdateEndpoint":
            params["EndpointConfigName"] = {"Fn::GetAtt": [config_id, "EndpointConfigName"]} if config_id else \
                params["EndpointConfigName"]
            params = _refer_to_alarms(params, lambda name: {"Ref": alarm_ids[name]} if name in alarm_ids else name)
            lines.append("# UpdateEndpoint: the endpoint's resource in its stack, with the new config and the "
                         "deployment policy (a stack update then deploys blue/green)")
        elif operation == "RegisterScalableTarget":
            target_id = logical
        elif operation == "PutScalingPolicy":
            for key in ("ServiceNamespace", "ResourceId", "ScalableDimension"):
                params.pop(key, None)
            params["ScalingTargetId"] = {"Ref": target_id} if target_id else ""
        resources[logical] = {"Type": kind, "Properties": params}
    lines.extend(said)
    if resources or not said:
        lines.append(_yaml({"Resources": resources}, 0) if resources else "# nothing to declare")
    return "\n".join(lines) + "\n"


def _refer_to_alarms(params: dict[str, Any], refer: Callable[[str], Any]) -> dict[str, Any]:
    """UpdateEndpoint's body with each rollback alarm's name replaced by `refer(name)` (a reference
    to the alarm the snippet declares; an existing alarm's name stays as it is)."""
    params = json.loads(json.dumps(params))  # a deep copy: the stored plan is not changed
    rollback = (params.get("DeploymentConfig") or {}).get("AutoRollbackConfiguration") or {}
    for alarm in rollback.get("Alarms") or []:
        alarm["AlarmName"] = refer(str(alarm.get("AlarmName")))
    return params


def _yaml(value: Any, indent: int) -> str:
    """Block YAML; every scalar written as JSON (valid YAML 1.2), so no value is read as markup."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return f"{pad}{{}}"
        out = []
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                out.append(f"{pad}{json.dumps(str(key))}:\n{_yaml(item, indent + 1)}")
            else:
                out.append(f"{pad}{json.dumps(str(key))}: {_scalar(item)}")
        return "\n".join(out)
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict | list) and item:
                body = _yaml(item, indent + 1).lstrip(" ")
                out.append(f"{pad}- {body}")
            else:
                out.append(f"{pad}- {_scalar(item)}")
        return "\n".join(out)
    return f"{pad}{_scalar(value)}"


def _scalar(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return json.dumps(value)


# Terraform (hashicorp/aws): the resource each request stands for.
_TF_TYPES = {"CreateEndpointConfig": "aws_sagemaker_endpoint_configuration", "UpdateEndpoint": "aws_sagemaker_endpoint",
             "PutMetricAlarm": "aws_cloudwatch_metric_alarm", "RegisterScalableTarget": "aws_appautoscaling_target",
             "PutScalingPolicy": "aws_appautoscaling_policy"}
# Where the provider's argument is not the request field's snake_case name.
_TF_NAMES = {"EndpointConfigName": "name", "EndpointName": "name", "KmsKeyId": "kms_key_arn",
             "ProductionVariants": "production_variants", "ShadowProductionVariants": "shadow_production_variants",
             "PolicyName": "name", "MemorySizeInMB": "memory_size_in_mb", "VolumeSizeInGB": "volume_size_in_gb"}


def _snake(name: str) -> str:
    if name in _TF_NAMES:
        return _TF_NAMES[name]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _hcl_string(value: str) -> str:
    """A double-quoted HCL string: JSON escapes, and template sequences ${ and %{ escaped."""
    return json.dumps(value).replace("${", "$${").replace("%{", "%%{")


class _Expression(str):
    """A Terraform expression (a reference to another resource), written bare, never quoted."""


def _hcl_value(value: Any) -> str:
    if isinstance(value, _Expression):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if value is None:
        return "null"
    return _hcl_string(str(value))


def _hcl_body(params: dict[str, Any], indent: int) -> list[str]:
    pad = "  " * indent
    lines = []
    for key, value in params.items():
        name = _snake(key)
        if key == "Tags" and isinstance(value, list):
            lines.append(f"{pad}tags = {{")
            lines.extend(f"{pad}  {_hcl_string(str(t['Key']))} = {_hcl_string(str(t['Value']))}" for t in value)
            lines.append(f"{pad}}}")
        elif key == "Dimensions" and isinstance(value, list):
            lines.append(f"{pad}dimensions = {{")
            lines.extend(f"{pad}  {_hcl_string(str(d['Name']))} = {_hcl_string(str(d['Value']))}" for d in value)
            lines.append(f"{pad}}}")
        elif isinstance(value, dict):
            lines.append(f"{pad}{name} {{")
            lines.extend(_hcl_body(value, indent + 1))
            lines.append(f"{pad}}}")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:  # a repeated nested block
                lines.append(f"{pad}{name} {{")
                lines.extend(_hcl_body(item, indent + 1))
                lines.append(f"{pad}}}")
        elif isinstance(value, list):
            lines.append(f"{pad}{name} = [{', '.join(_hcl_value(v) for v in value)}]")
        else:
            lines.append(f"{pad}{name} = {_hcl_value(value)}")
    return lines


def _terraform(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any]) -> str:
    lines = _header(plan, change, risk, "#")
    config_ref = target_ref = None
    alarm_refs: dict[str, str] = {}  # the alarms the plan defines: the endpoint refers to them
    for index, call in enumerate(change.get("calls") or []):
        operation, params = call["operation"], dict(call["params"])
        if operation == "DeleteEndpoint":
            lines.append(f"# delete: remove the aws_sagemaker_endpoint of {_line(params.get('EndpointName'))} "
                         "and keep its aws_sagemaker_endpoint_configuration")
            continue
        kind = _TF_TYPES.get(operation)
        if (one_off := _one_off(operation, "Terraform")) is not None:
            if one_off not in lines:
                lines.append(one_off)
            continue
        if kind is None:
            lines.append(f"# {_line(operation)}: no Terraform resource; see --as cli")
            continue
        name = re.sub(r"[^a-z0-9_]", "_", f"plan_{plan.get('id')}_{_snake(operation)}_{index}".lower())
        body = _hcl_body(params, 1)
        if operation == "CreateEndpointConfig":
            config_ref = f"{kind}.{name}.name"
        elif operation == "PutMetricAlarm":
            alarm_refs[str(params.get("AlarmName"))] = f"{kind}.{name}.alarm_name"
        elif operation == "UpdateEndpoint":
            lines.append("# UpdateEndpoint: the endpoint's resource in its module, with the new config and the "
                         "deployment policy")
            params.pop("EndpointConfigName", None)
            params = _refer_to_alarms(params, lambda alarm: _Expression(alarm_refs[alarm]) if alarm in alarm_refs
                                      else alarm)
            body = _hcl_body(params, 1)
            body.insert(1, f"  endpoint_config_name = {config_ref}" if config_ref else "")
        elif operation == "RegisterScalableTarget":
            target_ref = f"{kind}.{name}"
        elif operation == "PutScalingPolicy" and target_ref:
            for key in ("ResourceId", "ScalableDimension", "ServiceNamespace"):
                params.pop(key, None)
            body = _hcl_body(params, 1)
            body[1:1] = [f"  {a} = {target_ref}.{a}" for a in ("resource_id", "scalable_dimension",
                                                                "service_namespace")]
        lines.append(f'resource "{kind}" "{name}" {{')
        lines.extend(line for line in body if line)
        lines.append("}")
    return "\n".join(lines) + "\n"
