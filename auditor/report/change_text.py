"""A plan's change as text: AWS CLI commands, a CloudFormation snippet, a Terraform snippet, or the
JSON request bodies (`audit plans show ID --as ...`). Reads the plan as stored (plan_to_dict's JSON).

Every value comes from AWS or the config (tag values are anyone's text): the CLI commands quote them
for a POSIX shell, the YAML and HCL write them as escaped double-quoted strings, never bare.

CloudFormation and Terraform share one walk over the change's calls (`_declare`): each call becomes a
resource, a part of one declared before, or a comment line saying why not; what differs between the
two tools (resource types, names, bodies, references, layout) is a `_Dialect`.

The audit does not read an endpoint config's tags (one ListTags a config), so a plan's new config
may carry none: `audit plans show` reads them when it shows the change (CopiedTags) and they are
written into every form, with a comment line saying where they came from, or why they were not read.
"""

from __future__ import annotations

import json
import re
import shlex
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from auditor.models import ENDPOINT_TYPES, NAME_PARAMS, AnswerReference, CopiedTags, references_in, resolve_references
from auditor.records import stated_resource
from auditor.text import one_line

FORMATS = ("cli", "cloudformation", "terraform", "json")
# A job plan's change: the next run's request (kinds/jobs/change.py).
JOB_RUNS = ("CreateTrainingJob", "CreateProcessingJob", "CreateTransformJob")




def copied_config(plan: dict[str, Any]) -> str | None:
    """The endpoint config whose copy the plan's change creates (CreateEndpointConfig), else None."""
    calls = (plan.get("change") or {}).get("calls") or []
    if not any(c.get("operation") == "CreateEndpointConfig" for c in calls):
        return None
    name = (plan.get("current") or {}).get("endpoint_config_name")
    return str(name) if name else None


def render_change(plan: dict[str, Any], as_: str, copied_tags: CopiedTags | None = None) -> str:
    """The plan's change in one of FORMATS; a line saying why when it has none. `copied_tags`: the
    copied config's tags, read now, written into its new config (not into the JSON: that is the
    change as stored)."""
    change = plan.get("change")
    risk = plan.get("risk") or {}
    if as_ == "json":
        return json.dumps({"id": plan.get("id"), "change": change, "risk": risk or None}, indent=2) + "\n"
    if not change:
        missing = ((plan.get("proposed") or {}).get("details") or {}).get("change_missing")
        return (f"# plan {_line(plan.get('id'))}: no change the auditor can express as AWS requests "
                f"({_line((plan.get('proposed') or {}).get('action'))} on {_line(stated_resource(plan).get('type'))}"
                f"{': ' + _line(missing) if missing else ''}); see its advice\n")
    runs = [c["operation"] for c in change.get("calls") or [] if c.get("operation") in JOB_RUNS]
    if runs and as_ in ("cloudformation", "terraform"):
        # A job run is a request, not a resource a stack or a module keeps: nothing to declare.
        tool = "CloudFormation" if as_ == "cloudformation" else "Terraform"
        return (f"# plan {_line(plan.get('id'))}: {tool} has no resource for a one-off job run; its change is the "
                f"next run's {_line(runs[0])} request: see --as cli or --as json\n")
    notes: list[str] = []
    if copied_tags is not None:
        change, note = _with_copied_tags(change, copied_tags)
        notes.append(note)
    renderer = {"cli": _cli, "cloudformation": _cloudformation, "terraform": _terraform}[as_]
    return renderer(plan, change, risk, notes)


def _with_copied_tags(change: dict[str, Any], copied: CopiedTags) -> tuple[dict[str, Any], str]:
    """The change with the copied tags in its new config's Tags (a tag the call sets itself wins),
    and the comment saying where they came from or why there are none."""
    source = _line(copied.source_config)
    if copied.problem is not None:
        tagged = any(c.get("operation") == "CreateEndpointConfig" and c["params"].get("Tags")
                     for c in change.get("calls") or [])
        written = "only the request's own are" if tagged else "none are"
        return change, (f"tags of endpoint config {source} not read ({_line(copied.problem)}): {written} written "
                        "below; add them by hand (`audit apply` copies them when it makes the config)")
    calls = []
    for call in change.get("calls") or []:
        if call.get("operation") == "CreateEndpointConfig":
            own = [t for t in call["params"].get("Tags") or [] if isinstance(t, Mapping)]
            named = {t.get("Key") for t in own}
            tags = [{"Key": k, "Value": v} for k, v in copied.tags if k not in named] + own
            if tags:
                call = {**call, "params": {**call["params"], "Tags": tags}}
        calls.append(call)
    when = copied.read_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    count = f"{len(copied.tags)} tag{'s' if len(copied.tags) != 1 else ''}" if copied.tags else "it has none"
    return {**change, "calls": calls}, (f"tags copied from endpoint config {source}, read with ListTags at {when} "
                                        f"({count})")


def plans_text(plans: list[dict[str, Any]]) -> str:
    """Every plan's row and its change as AWS CLI commands (the demo's plans.txt)."""
    if not plans:
        return "No plans.\n"
    return "\n".join(f"# {plan_line(p)}\n{render_change(p, 'cli')}" for p in plans)


def plan_line(plan: dict[str, Any], included_in: str | None = None) -> str:
    """One row of `audit plans`: id, risk, saving, whether it has a change, and the advice;
    `included_in`: the plan whose saving holds this one's (report.views.included_plans)."""
    risk = (plan.get("risk") or {}).get("level") or "-"
    resource = stated_resource(plan)
    kind = str(resource.get("type") or "endpoint")
    label = str(resource.get("name")) if kind in ENDPOINT_TYPES else f"{kind.replace('-', ' ')} {resource.get('name')}"
    where = f"{label}{'/' + str(plan['variant']) if plan.get('variant') else ''}"
    advice = (plan.get("proposed") or {}).get("advice") or ""
    return _line(f"{plan.get('id') or ''!s:10}  {risk:6}  {float(plan.get('monthly_savings_usd') or 0):>13,.2f}  "
                 f"{'yes' if plan.get('change') else 'no':6}  {where} ({resource.get('region')}): {advice}"
                 + (f" (counted in plan {included_in})" if included_in else ""))


def _line(value: Any) -> str:
    """One line of text for a comment: control characters (newlines) replaced."""
    return one_line(str(value))


def _header(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any], comment: str,
            notes: list[str]) -> list[str]:
    proposed, resource = plan.get("proposed") or {}, stated_resource(plan)
    lines = [f"{comment} plan {_line(plan.get('id'))}: {_line(resource.get('name'))}"
             f"{'/' + _line(plan['variant']) if plan.get('variant') else ''} in {_line(resource.get('region'))}: "
             f"{_line(proposed.get('advice'))}",
             f"{comment} risk: {_line(risk.get('level', 'not assessed'))}; "
             f"rollback: {_line(change.get('rollback'))}"]
    for reason in risk.get("load_test_first") or []:
        lines.append(f"{comment} load-test first: {_line(reason)}")
    for fact in risk.get("basis") or []:  # what a level rests on where no replay applies
        lines.append(f"{comment} risk rests on: {_line(fact)}")
    if change.get("waits_for"):
        lines.append(f"{comment} then wait for {_line(change['waits_for'])}")
    lines.extend(f"{comment} {_line(note)}" for note in notes)
    return lines


def _kebab(operation: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", operation).lower()


def _cli(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any], notes: list[str]) -> str:
    lines = _header(plan, change, risk, "#", notes)
    resource = stated_resource(plan)
    region = _word(resource.get("region") or "")
    request = risk.get("load_test_request")
    calls = ([request] if request else []) + list(change.get("calls") or [])
    captured = _captured(calls)
    # The call the later ones wait for (a deployment, a new endpoint): the endpoint InService right after it.
    waited = next((i for i, c in enumerate(calls) if c is not request and c.get("operation") in _WAITED_FOR), None)
    for index, call in enumerate(calls):
        lines.append(f"# {_line(call.get('purpose'))}")
        if call is request:
            lines.append("# (the load test: run it, read its recommendations, then apply the rest)")
        body, unanswered = _cli_body(call["params"], calls[:index], captured)
        lines.extend(f"# {_line(call['operation'])} takes {_line(_said(r))}, which no earlier call makes: put it in "
                     "by hand" for r in unanswered)
        command = (f"aws {_word(call['service'])} {_word(_kebab(call['operation']))} "
                   f"--region {region} --cli-input-json {body}")
        fields = captured.get(index)
        if not fields:
            lines.append(command)
        elif len(fields) == 1:
            ((field_name, variable),) = fields.items()
            lines.append(f"# {variable}: the {_line(field_name)} it answers, which a later command takes")
            lines.append(f"{variable}=$({command} --query {_word(field_name)} --output text)")
        else:
            lines.append(f"# {', '.join(fields.values())}: the {', '.join(_line(f) for f in fields)} it answers, "
                         "which later commands take")
            lines.append(f"read -r {' '.join(fields.values())} <<< \"$({command} --query "
                         f"{shlex.quote('[' + ', '.join(_line(f) for f in fields) + ']')} --output text)\"")
        if index == waited:
            lines.append(f"aws sagemaker wait endpoint-in-service --region {region} --endpoint-name "
                         f"{_word((call.get('params') or {}).get('EndpointName'))}")
    waiter = _WAITERS.get(str(resource.get("type")))
    if waited is None and change.get("waits_for") and resource.get("name") and waiter:
        lines.append(f"aws sagemaker wait {waiter[0]} --region {region} {waiter[1]} {_word(resource['name'])}")
    return "\n".join(lines) + "\n"


def _said(reference: AnswerReference) -> str:
    return f"the {reference.field} of {reference.operation} {reference.name}"


def _referred_index(calls: list[dict[str, Any]], reference: AnswerReference) -> int | None:
    """The index of the call among `calls` an answer reference names (its operation and name), or None."""
    key = NAME_PARAMS.get(reference.operation)
    return next((i for i, c in enumerate(calls) if c.get("operation") == reference.operation and key
                 and (c.get("params") or {}).get(key) == reference.name), None)


def _captured(calls: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    """The answers later commands take, by the index of the command that answers them: field ->
    the shell variable it is captured in (POLICY_ARN_1: the first command's PolicyARN)."""
    captured: dict[int, dict[str, str]] = {}
    for index, call in enumerate(calls):
        for reference in references_in(call.get("params") or {}):
            earlier = _referred_index(calls[:index], reference)
            if earlier is not None and re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", reference.field):
                captured.setdefault(earlier, {})[reference.field] = f"{_snake(reference.field).upper()}_{earlier + 1}"
    return captured


def _cli_body(params: dict[str, Any], earlier: list[dict[str, Any]],
              captured: dict[int, dict[str, str]]) -> tuple[str, list[AnswerReference]]:
    """The request as one shell word of JSON, each answer reference in it the shell variable that
    captured the answer (the word leaves its single quotes for "$VAR"), and the references no earlier
    command answers (left as they are)."""
    text = json.dumps(params, sort_keys=True)
    stand_ins: dict[str, str] = {}
    unanswered: list[AnswerReference] = []

    def stand_in(reference: AnswerReference) -> Any:
        index = _referred_index(earlier, reference)
        variable = captured.get(index, {}).get(reference.field) if index is not None else None
        if variable is None:
            unanswered.append(reference)
            return _reference_text(reference)
        token = f"ANSWER{len(stand_ins)}"
        while token in text or any(token in t for t in stand_ins):  # never a string the request holds
            token += "_"
        stand_ins[token] = variable
        return token

    word = shlex.quote(json.dumps(resolve_references(params, stand_in), sort_keys=True))
    for token in sorted(stand_ins, key=len, reverse=True):  # ANSWER10 before ANSWER1
        word = word.replace(token, f"'\"${stand_ins[token]}\"'")
    return word, unanswered


def _reference_text(reference: AnswerReference) -> str:
    return f"${{{reference.operation}:{reference.name}.{reference.field}}}"


def _word(value: Any) -> str:
    """A name (a service, an operation, a region, an endpoint) as one shell word on the command's line:
    quoted, and a control character in it a space (no AWS name holds one; a forged one would break the
    command's line in two)."""
    return shlex.quote(_line(value))


# The calls the ones after them wait for (a deployment, a new endpoint): the CLI text waits for the
# endpoint InService right after it, as apply does.
_WAITED_FOR = ("UpdateEndpoint", "CreateEndpoint")
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
              "CreateEndpoint": "AWS::SageMaker::Endpoint",
              "CreateInferenceComponent": "AWS::SageMaker::InferenceComponent",
              "PutMetricAlarm": "AWS::CloudWatch::Alarm",
              "RegisterScalableTarget": "AWS::ApplicationAutoScaling::ScalableTarget",
              "PutScalingPolicy": "AWS::ApplicationAutoScaling::ScalingPolicy",
              "CreateSchedule": "AWS::Scheduler::Schedule"}
# The answer fields a resource's Ref returns (its ARN); any other is its Fn::GetAtt.
_CFN_REF_IS = {"AWS::ApplicationAutoScaling::ScalingPolicy": ("PolicyARN",),
               "AWS::SageMaker::EndpointConfig": ("EndpointConfigArn",), "AWS::SageMaker::Endpoint": ("EndpointArn",)}
# Request fields the resource type has no property for (cfn-lint's schemas): left out and named.
_CFN_LEFT_OUT = {"CreateEndpointConfig": ("CrossRegionTrafficConfig",), "CreateSchedule": ("ActionAfterCompletion",)}
_CFN_VARIANT_LEFT_OUT = ("AcceleratorPartitionLayouts",)
# A scheduled action is a property of its scalable target (ScheduledActions), not a resource.
_CFN_SCHEDULED_ACTION = ("ScheduledActionName", "Schedule", "Timezone", "StartTime", "EndTime", "ScalableTargetAction")


def _logical_id(*parts: Any) -> str:
    text = "".join(re.sub(r"[^A-Za-z0-9]", " ", str(p)).title().replace(" ", "") for p in parts)
    return text[:255] or "Resource"


def _cfn_properties(operation: str, params: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The resource's properties from the request, and the request fields it has none for."""
    left_out = [key for key in _CFN_LEFT_OUT.get(operation, ()) if key in params]
    properties = {k: v for k, v in params.items() if k not in left_out and k not in _REQUEST_ONLY}
    if operation == "CreateEndpointConfig":
        for key in ("ProductionVariants", "ShadowProductionVariants"):
            variants = []
            for variant in properties.get(key) or []:
                dropped = [f for f in _CFN_VARIANT_LEFT_OUT if isinstance(variant, dict) and f in variant]
                left_out += [f"{key}.{f}" for f in dropped]
                variants.append({k: v for k, v in variant.items() if k not in dropped})
            if key in properties:
                properties[key] = variants
    return properties, left_out


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


# Terraform: every resource and argument as hashicorp/aws declares it in TERRAFORM_PROVIDER
# (tests/test_change_forms.py checks the text against that version's own schema). A request field
# the resource has no argument for is left out and named in a comment line; a request that lacks an
# argument the provider requires is not declared (a comment says why).
TERRAFORM_PROVIDER = "hashicorp/aws 5.100.0"


@dataclass(frozen=True)
class _Block:
    """A nested block (or the resource itself): the request field's object, or each object of its
    list, as `name { ... }`; `fields` maps its request fields to arguments."""

    name: str
    fields: Mapping[str, Any]  # request field -> argument name | _Block | _Map | _Text
    required: tuple[str, ...] = ()  # request fields without which the provider refuses it


@dataclass(frozen=True)
class _Map:
    """A map attribute from a request's list of pairs (Tags: Key/Value, Dimensions: Name/Value) or object."""

    name: str
    key: str = "Key"
    value: str = "Value"


@dataclass(frozen=True)
class _Text:
    """A string attribute from a number (the provider types scheduled capacities as strings)."""

    name: str


class _Undeclarable(Exception):
    """The request lacks an argument the resource requires: it cannot be declared as it is."""


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _same(*fields: str) -> dict[str, str]:
    """Request fields whose argument is their snake_case name."""
    return {f: _snake(f) for f in fields}


_TAGS = _Map("tags")
_VARIANT_FIELDS: dict[str, Any] = {
    **_same("VariantName", "ModelName", "InitialInstanceCount", "InstanceType", "InitialVariantWeight",
            "AcceleratorType", "ModelDataDownloadTimeoutInSeconds", "ContainerStartupHealthCheckTimeoutInSeconds",
            "EnableSSMAccess", "InferenceAmiVersion"),
    "VolumeSizeInGB": "volume_size_in_gb",
    "CoreDumpConfig": _Block("core_dump_config", _same("DestinationS3Uri", "KmsKeyId"), ("DestinationS3Uri",)),
    "ServerlessConfig": _Block("serverless_config", {"MemorySizeInMB": "memory_size_in_mb",
                                                     **_same("MaxConcurrency", "ProvisionedConcurrency")},
                               ("MemorySizeInMB", "MaxConcurrency")),
    "ManagedInstanceScaling": _Block("managed_instance_scaling",
                                     _same("Status", "MinInstanceCount", "MaxInstanceCount")),
    "RoutingConfig": _Block("routing_config", _same("RoutingStrategy"), ("RoutingStrategy",)),
}
_SHADOW_FIELDS = {**_VARIANT_FIELDS, "CoreDumpConfig": _Block("core_dump_config", _same("DestinationS3Uri", "KmsKeyId"),
                                                              ("DestinationS3Uri", "KmsKeyId"))}
_CAPACITY_STEP = _same("Type", "Value")
_METRIC_DIMENSIONS = _Block("dimensions", _same("Name", "Value"), ("Name", "Value"))

# The resource each request stands for, with the arguments it has (hashicorp/aws 5.100.0 has no
# inference component resource: CreateInferenceComponent is said, not declared).
_TF_RESOURCES: dict[str, _Block] = {
    "CreateEndpointConfig": _Block("aws_sagemaker_endpoint_configuration", {
        "EndpointConfigName": "name", "KmsKeyId": "kms_key_arn", "Tags": _TAGS,
        "ProductionVariants": _Block("production_variants", _VARIANT_FIELDS, ("ModelName",)),
        "ShadowProductionVariants": _Block("shadow_production_variants", _SHADOW_FIELDS, ("ModelName",)),
        "DataCaptureConfig": _Block("data_capture_config", {
            **_same("EnableCapture", "InitialSamplingPercentage", "DestinationS3Uri", "KmsKeyId"),
            "CaptureOptions": _Block("capture_options", _same("CaptureMode"), ("CaptureMode",)),
            "CaptureContentTypeHeader": _Block("capture_content_type_header",
                                               _same("CsvContentTypes", "JsonContentTypes")),
        }, ("DestinationS3Uri", "InitialSamplingPercentage", "CaptureOptions")),
        "AsyncInferenceConfig": _Block("async_inference_config", {
            "ClientConfig": _Block("client_config", _same("MaxConcurrentInvocationsPerInstance")),
            "OutputConfig": _Block("output_config", {
                **_same("S3OutputPath", "S3FailurePath", "KmsKeyId"),
                "NotificationConfig": _Block("notification_config",
                                             _same("SuccessTopic", "ErrorTopic", "IncludeInferenceResponseIn")),
            }, ("S3OutputPath",)),
        }, ("OutputConfig",)),
    }, ("ProductionVariants",)),
    "UpdateEndpoint": _Block("aws_sagemaker_endpoint", {
        "EndpointName": "name", "EndpointConfigName": "endpoint_config_name", "Tags": _TAGS,
        "DeploymentConfig": _Block("deployment_config", {
            "BlueGreenUpdatePolicy": _Block("blue_green_update_policy", {
                "TrafficRoutingConfiguration": _Block("traffic_routing_configuration", {
                    **_same("Type", "WaitIntervalInSeconds"),
                    "CanarySize": _Block("canary_size", _CAPACITY_STEP, ("Type", "Value")),
                    "LinearStepSize": _Block("linear_step_size", _CAPACITY_STEP, ("Type", "Value")),
                }, ("Type", "WaitIntervalInSeconds")),
                **_same("TerminationWaitInSeconds", "MaximumExecutionTimeoutInSeconds"),
            }, ("TrafficRoutingConfiguration",)),
            "AutoRollbackConfiguration": _Block("auto_rollback_configuration", {
                "Alarms": _Block("alarms", _same("AlarmName"), ("AlarmName",))}),
            "RollingUpdatePolicy": _Block("rolling_update_policy", {
                "MaximumBatchSize": _Block("maximum_batch_size", _CAPACITY_STEP, ("Type", "Value")),
                "RollbackMaximumBatchSize": _Block("rollback_maximum_batch_size", _CAPACITY_STEP, ("Type", "Value")),
                **_same("WaitIntervalInSeconds", "MaximumExecutionTimeoutInSeconds"),
            }, ("MaximumBatchSize", "WaitIntervalInSeconds")),
        }),
    }, ("EndpointConfigName",)),
    "PutMetricAlarm": _Block("aws_cloudwatch_metric_alarm", {
        **_same("AlarmName", "AlarmDescription", "ActionsEnabled", "AlarmActions", "InsufficientDataActions",
                "MetricName", "Namespace", "Statistic", "ExtendedStatistic", "Period", "Unit", "EvaluationPeriods",
                "DatapointsToAlarm", "Threshold", "ComparisonOperator", "TreatMissingData", "ThresholdMetricId"),
        "OKActions": "ok_actions", "EvaluateLowSampleCountPercentile": "evaluate_low_sample_count_percentiles",
        "Dimensions": _Map("dimensions", "Name", "Value"), "Tags": _TAGS,
    }, ("AlarmName", "ComparisonOperator", "EvaluationPeriods")),
    "RegisterScalableTarget": _Block("aws_appautoscaling_target", {
        **_same("ServiceNamespace", "ResourceId", "ScalableDimension", "MinCapacity", "MaxCapacity"),
        "RoleARN": "role_arn", "Tags": _TAGS,
        "SuspendedState": _Block("suspended_state", _same("DynamicScalingInSuspended", "DynamicScalingOutSuspended",
                                                          "ScheduledScalingSuspended")),
    }, ("ServiceNamespace", "ResourceId", "ScalableDimension", "MinCapacity", "MaxCapacity")),
    "PutScalingPolicy": _Block("aws_appautoscaling_policy", {
        "PolicyName": "name", **_same("ServiceNamespace", "ResourceId", "ScalableDimension", "PolicyType"),
        "TargetTrackingScalingPolicyConfiguration": _Block("target_tracking_scaling_policy_configuration", {
            **_same("TargetValue", "DisableScaleIn", "ScaleInCooldown", "ScaleOutCooldown"),
            "PredefinedMetricSpecification": _Block("predefined_metric_specification",
                                                    _same("PredefinedMetricType", "ResourceLabel"),
                                                    ("PredefinedMetricType",)),
            "CustomizedMetricSpecification": _Block("customized_metric_specification", {
                **_same("MetricName", "Namespace", "Statistic", "Unit"), "Dimensions": _METRIC_DIMENSIONS}),
        }, ("TargetValue",)),
        "StepScalingPolicyConfiguration": _Block("step_scaling_policy_configuration", {
            **_same("AdjustmentType", "Cooldown", "MetricAggregationType", "MinAdjustmentMagnitude"),
            "StepAdjustments": _Block("step_adjustment", {
                "MetricIntervalLowerBound": _Text("metric_interval_lower_bound"),
                "MetricIntervalUpperBound": _Text("metric_interval_upper_bound"),
                **_same("ScalingAdjustment")}, ("ScalingAdjustment",)),
        }),
    }, ("PolicyName", "ServiceNamespace", "ResourceId", "ScalableDimension")),
    "PutScheduledAction": _Block("aws_appautoscaling_scheduled_action", {
        "ScheduledActionName": "name",
        **_same("ServiceNamespace", "ResourceId", "ScalableDimension", "Schedule", "Timezone", "StartTime", "EndTime"),
        "ScalableTargetAction": _Block("scalable_target_action", {"MinCapacity": _Text("min_capacity"),
                                                                  "MaxCapacity": _Text("max_capacity")}),
    }, ("ScheduledActionName", "ServiceNamespace", "ResourceId", "ScalableDimension", "Schedule",
        "ScalableTargetAction")),
    "CreateSchedule": _Block("aws_scheduler_schedule", {
        **_same("Name", "GroupName", "ScheduleExpression", "ScheduleExpressionTimezone", "Description", "State",
                "StartDate", "EndDate", "KmsKeyArn"),
        "FlexibleTimeWindow": _Block("flexible_time_window", _same("Mode", "MaximumWindowInMinutes"), ("Mode",)),
        "Target": _Block("target", {
            **_same("Arn", "RoleArn", "Input"),
            "RetryPolicy": _Block("retry_policy", _same("MaximumEventAgeInSeconds", "MaximumRetryAttempts")),
            "DeadLetterConfig": _Block("dead_letter_config", _same("Arn"), ("Arn",)),
        }, ("Arn", "RoleArn")),
    }, ("ScheduleExpression", "FlexibleTimeWindow", "Target")),
}
# The attribute of a resource that holds an answer field later calls take (answer references).
_TF_ANSWERS = {"PolicyARN": "arn", "EndpointConfigArn": "arn", "EndpointArn": "arn", "InferenceComponentArn": "arn"}
# A new endpoint is the same resource an update changes (CreateEndpoint has no deployment config).
_TF_RESOURCES["CreateEndpoint"] = _TF_RESOURCES["UpdateEndpoint"]
# Fields of the request itself, not of the resource (an idempotency token): never declared, nothing to say.
_REQUEST_ONLY = frozenset({"ClientToken"})
# The attributes a scalable target exports that a policy or a scheduled action of it refers to.
_TARGET_KEYS = {"ResourceId": "resource_id", "ScalableDimension": "scalable_dimension",
                "ServiceNamespace": "service_namespace"}


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


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _hcl_body(params: Mapping[str, Any], block: _Block, indent: int, where: str, left_out: list[str]) -> list[str]:
    """The block's arguments from the request's fields; a field it has no argument for is added to
    `left_out` (by its path in the request). _Undeclarable when a required field is missing."""
    missing = [key for key in block.required if params.get(key) in (None, "", [], {})]
    if missing:
        raise _Undeclarable(f"{where or block.name} has no {', '.join(missing)}")
    lines: list[str] = []
    for key, value in params.items():
        if key in _REQUEST_ONLY or value is None:
            continue
        path = f"{where}.{key}" if where else key
        argument = block.fields.get(key)
        if argument is None:
            left_out.append(path)
        else:
            lines.extend(_hcl_argument(argument, value, indent, path, left_out))
    return lines


def _hcl_argument(argument: Any, value: Any, indent: int, path: str, left_out: list[str]) -> list[str]:
    """One request field as its argument (`name = value`), map argument or nested blocks; `argument`
    is what the block maps the field to (an argument name, a _Block, a _Map or a _Text)."""
    pad = "  " * indent
    if isinstance(argument, _Block):
        return _hcl_blocks(argument, value, indent, path, left_out)
    if isinstance(argument, _Map):
        pairs = (value.items() if isinstance(value, Mapping)
                 else [(pair[argument.key], pair[argument.value]) for pair in value])
        entries = [f"{pad}  {_hcl_string(str(k))} = {_hcl_string(str(v))}" for k, v in pairs]
        return [f"{pad}{argument.name} = {{", *entries, f"{pad}}}"]
    if isinstance(argument, _Text):
        return [f"{pad}{argument.name} = {_hcl_string(_number_text(value))}"]
    if isinstance(value, list):
        return [f"{pad}{argument} = [{', '.join(_hcl_value(v) for v in value)}]"]
    return [f"{pad}{argument} = {_hcl_value(value)}"]


def _hcl_blocks(block: _Block, value: Any, indent: int, path: str, left_out: list[str]) -> list[str]:
    """A nested block for the field's object, or one for each object of its list; a list that holds
    anything else is left out from there on."""
    pad = "  " * indent
    lines: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, Mapping):
            left_out.append(path)
            break
        lines.extend([f"{pad}{block.name} {{", *_hcl_body(item, block, indent + 1, path, left_out), f"{pad}}}"])
    return lines


# --- CloudFormation and Terraform: one walk over the calls, a dialect for each --------------------


@dataclass(frozen=True)
class _Declared:
    """A resource the text declares: its type, its name in the text (a logical id, a resource name) and
    its body in the dialect's terms (CloudFormation: its properties; Terraform: its argument lines)."""

    kind: str
    name: str
    body: Any


class _OneOff(str):
    """The comment line for a one-off call: said once, however many calls of its kind."""


_Item = str | _Declared


def _target_key(params: Mapping[str, Any]) -> tuple[str, str]:
    return str(params.get("ResourceId")), str(params.get("ScalableDimension"))


@dataclass
class _Declarations:
    """The resources declared so far, by the name a later call of the change gives them: that call
    refers to the declared resource (so the tool orders and links them) instead of repeating its name."""

    configs: dict[str, _Declared] = field(default_factory=dict)  # by EndpointConfigName
    endpoints: dict[str, _Declared] = field(default_factory=dict)  # by EndpointName (a new endpoint)
    alarms: dict[str, _Declared] = field(default_factory=dict)  # by AlarmName
    targets: dict[tuple[str, str], _Declared] = field(default_factory=dict)  # by (ResourceId, ScalableDimension)
    withheld: set[str] = field(default_factory=set)  # configs made by the CLI instead (_Dialect.withheld)
    # by the operation and the name an answer reference names the call by (auditor.models.NAME_PARAMS)
    answers: dict[tuple[str, str], _Declared] = field(default_factory=dict)

    def add(self, operation: str, params: Mapping[str, Any], resource: _Declared) -> None:
        if operation in NAME_PARAMS:
            self.answers[(operation, str(params.get(NAME_PARAMS[operation])))] = resource
        if operation == "CreateEndpointConfig":
            self.configs[str(params.get("EndpointConfigName"))] = resource
        elif operation == "CreateEndpoint":
            self.endpoints[str(params.get("EndpointName"))] = resource
        elif operation == "PutMetricAlarm":
            self.alarms[str(params.get("AlarmName"))] = resource
        elif operation == "RegisterScalableTarget":
            self.targets[_target_key(params)] = resource

    def referred(self, dialect: _Dialect, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """The request with the name of each resource declared before replaced by a reference to it, and
        each answer reference by the attribute of the declared resource that holds that answer (one
        not declared stays as it is: `_declare_call` says so)."""
        answers = self.answers

        def attribute(reference: AnswerReference) -> Any:
            resource = answers.get((reference.operation, reference.name))
            return _reference_text(reference) if resource is None else dialect.refer_to_answer(resource,
                                                                                             reference.field)

        if operation == "CreateEndpoint":
            config = self.configs.get(str(params.get("EndpointConfigName")))
            if config is not None:
                params["EndpointConfigName"] = dialect.refer_to_config(config)
        elif operation == "CreateInferenceComponent":
            endpoint = self.endpoints.get(str(params.get("EndpointName")))
            if endpoint is not None:  # created on the endpoint declared before: the tool orders them by it
                params["EndpointName"] = dialect.refer_to_endpoint(endpoint)
        elif operation == "UpdateEndpoint":
            alarms = self.alarms
            params = _refer_to_alarms(params, lambda name: dialect.refer_to_alarm(alarms[name]) if name in alarms
                                      else name)
            config = self.configs.get(str(params.get("EndpointConfigName")))
            if config is not None:
                params["EndpointConfigName"] = dialect.refer_to_config(config)
        elif operation in ("PutScalingPolicy", "PutScheduledAction"):
            target = self.targets.get(_target_key(params))
            if target is not None:  # declared after its target: the tool orders them by the reference
                params = dialect.refer_to_target(params, target)
        return resolve_references(params, attribute)  # last: the copy above would unmark an expression


class _Dialect(ABC):
    """What CloudFormation and Terraform write differently for the same calls; _declare walks the
    calls once for both."""

    tool: ClassVar[str]  # the tool's name in the text
    home: ClassVar[str]  # what a resource is declared in
    types: ClassVar[Mapping[str, str]]  # operation -> the type of the resource its request stands for
    field_word: ClassVar[str]  # what the type calls its fields
    maker: ClassVar[str]  # what makes the resources
    delete_endpoint: ClassVar[str]  # the line for a DeleteEndpoint, {endpoint} its name
    update_endpoint: ClassVar[str]  # the comment before an UpdateEndpoint's resource

    def described(self, kind: str) -> str:
        """The resource type as the text names it, with the schema it is checked against."""
        return kind

    @abstractmethod
    def name(self, plan_id: Any, operation: str, index: int) -> str:
        """The resource's name in the text (unique in it: the call's place is part of it)."""

    @abstractmethod
    def body(self, operation: str, params: dict[str, Any]) -> tuple[Any, list[str]]:
        """The resource's body from the request, and the request fields it has no place for (by their
        path in the request); _Undeclarable when the request lacks what the type requires."""

    @abstractmethod
    def refer_to_config(self, config: _Declared) -> Any:
        """The value that names a declared endpoint config in an endpoint."""

    @abstractmethod
    def refer_to_alarm(self, alarm: _Declared) -> Any:
        """The value that names a declared alarm in an endpoint's rollback alarms."""

    def refer_to_endpoint(self, endpoint: _Declared) -> Any:
        """The value that names a declared endpoint in an inference component."""
        return {"Fn::GetAtt": [endpoint.name, "EndpointName"]}

    @abstractmethod
    def refer_to_answer(self, resource: _Declared, answer_field: str) -> Any:
        """The value that stands for a field of the answer to the call a declared resource stands for
        (a scaling policy's PolicyARN in the alarm that invokes it)."""

    @abstractmethod
    def refer_to_target(self, params: dict[str, Any], target: _Declared) -> dict[str, Any]:
        """A scaling policy's or a scheduled action's request tied to its declared scalable target."""

    def nested(self, operation: str, params: dict[str, Any], declared: _Declarations) -> list[_Item] | None:
        """The lines of a call the dialect writes into a resource declared before, not as a resource of
        its own; None for a call that is a resource."""
        return None

    def withheld(self, plan: dict[str, Any], call: dict[str, Any], declared: _Declarations) -> list[_Item] | None:
        """The lines of a call the dialect cannot declare faithfully, in its stead (the AWS CLI step
        that makes it); None for a call declared as usual."""
        return None

    @abstractmethod
    def layout(self, items: list[_Item]) -> list[str]:
        """The text's lines from the walk's comment lines and resources, in call order."""


def _declare(dialect: _Dialect, plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any],
             notes: list[str]) -> str:
    """The change as the dialect's resources: each call in turn becomes a resource, a part of one
    declared before, or a comment line saying why nothing is declared for it."""
    declared = _Declarations()
    items: list[_Item] = []
    for index, call in enumerate(change.get("calls") or []):
        held = dialect.withheld(plan, call, declared)
        for item in held if held is not None else _declare_call(dialect, declared, plan.get("id"), index, call):
            if not (isinstance(item, _OneOff) and item in items):
                items.append(item)
    return "\n".join([*_header(plan, change, risk, "#", notes), *dialect.layout(items)]) + "\n"


def _declare_call(dialect: _Dialect, declared: _Declarations, plan_id: Any, index: int,
                  call: dict[str, Any]) -> list[_Item]:
    """One call as the dialect's resource (after the comment lines it needs), or as comment lines."""
    operation, params = call["operation"], dict(call["params"])
    if operation == "DeleteEndpoint":
        return [dialect.delete_endpoint.format(endpoint=_line(params.get("EndpointName")))]
    if (one_off := _one_off(operation, dialect.tool)) is not None:
        return [_OneOff(one_off)]
    nested = dialect.nested(operation, params, declared)
    if nested is not None:
        return nested
    kind = dialect.types.get(operation)
    if kind is None:
        return [_undeclared(operation, params, dialect)]
    params = declared.referred(dialect, operation, params)
    unanswered = [f"# {_line(operation)} takes {_line(_said(r))}, which is not declared here: put it in by hand"
                  for r in references_in(params)]
    try:
        body, left_out = dialect.body(operation, params)
    except _Undeclarable as exc:
        return [f"# {_line(operation)}: not declared: {dialect.described(kind)} requires an argument the request "
                f"lacks ({_line(exc)}); the request: --as cli"]
    resource = _Declared(kind, dialect.name(plan_id, operation, index), body)
    declared.add(operation, params, resource)
    comments: list[_Item] = [*unanswered, *([dialect.update_endpoint] if operation == "UpdateEndpoint" else [])]
    if left_out:
        comments.append(f"# {_line(operation)}: {dialect.described(kind)} has no {dialect.field_word} for "
                        f"{_line(', '.join(dict.fromkeys(left_out)))}: left out here, so what {dialect.maker} makes "
                        "lacks them; the request (--as cli) has them")
    return [*comments, resource]


def _undeclared(operation: str, params: dict[str, Any], dialect: _Dialect) -> str:
    """The line for a call no resource of the dialect declares."""
    if operation == "DeregisterScalableTarget":
        return (f"# DeregisterScalableTarget {_line(params.get('ResourceId'))}: a one-off call before the update "
                f"(where the target is declared in a {dialect.home}, remove its "
                f"{dialect.types['RegisterScalableTarget']} and policies there); the request: --as cli")
    return f"# {_line(operation)}: no {dialect.tool} resource; see --as cli"


class _CloudFormation(_Dialect):
    """A template's Resources, as one YAML document after the comment lines."""

    tool = "CloudFormation"
    home = "stack"
    types = _CFN_TYPES
    field_word = "property"
    maker = "the stack"
    delete_endpoint = ("# delete: remove the AWS::SageMaker::Endpoint of {endpoint} from its stack and keep its "
                       "AWS::SageMaker::EndpointConfig")
    update_endpoint = ("# UpdateEndpoint: the endpoint's resource in its stack, with the new config and the "
                       "deployment policy (a stack update then deploys blue/green)")

    def name(self, plan_id: Any, operation: str, index: int) -> str:
        return _logical_id(plan_id, operation, index)

    def body(self, operation: str, params: dict[str, Any]) -> tuple[Any, list[str]]:
        return _cfn_properties(operation, params)

    def refer_to_config(self, config: _Declared) -> Any:
        return {"Fn::GetAtt": [config.name, "EndpointConfigName"]}  # its Ref is the ARN

    def refer_to_alarm(self, alarm: _Declared) -> Any:
        return {"Ref": alarm.name}

    def refer_to_answer(self, resource: _Declared, answer_field: str) -> Any:
        # A scaling policy's, an endpoint config's and an endpoint's Ref is its ARN.
        if answer_field in _CFN_REF_IS.get(resource.kind, ()):
            return {"Ref": resource.name}
        return {"Fn::GetAtt": [resource.name, answer_field]}

    def refer_to_target(self, params: dict[str, Any], target: _Declared) -> dict[str, Any]:
        return {**{k: v for k, v in params.items() if k not in _TARGET_KEYS}, "ScalingTargetId": {"Ref": target.name}}

    def nested(self, operation: str, params: dict[str, Any], declared: _Declarations) -> list[_Item] | None:
        if operation != "PutScheduledAction":
            return None
        target = declared.targets.get(_target_key(params))
        if target is None:
            return [f"# PutScheduledAction {_line(params.get('ScheduledActionName'))}: add it to the "
                    f"ScheduledActions of the AWS::ApplicationAutoScaling::ScalableTarget of "
                    f"{_line(params.get('ResourceId'))}; the request: --as cli"]
        # The target's properties are its resource's: the action is written into the declared target.
        target.body.setdefault("ScheduledActions", []).append(
            {k: params[k] for k in _CFN_SCHEDULED_ACTION if k in params})
        return []

    def layout(self, items: list[_Item]) -> list[str]:
        comments = [i for i in items if isinstance(i, str) and not isinstance(i, _OneOff)]
        one_offs = [i for i in items if isinstance(i, _OneOff)]
        resources = {i.name: {"Type": i.kind, "Properties": i.body} for i in items if isinstance(i, _Declared)}
        if resources:
            return [*comments, *one_offs, _yaml({"Resources": resources}, 0)]
        return [*comments, *one_offs] if one_offs else [*comments, "# nothing to declare"]


class _Terraform(_Dialect):
    """hashicorp/aws resources, each after its comment lines, in call order."""

    tool = "Terraform"
    home = "module"
    types: ClassVar[Mapping[str, str]] = {operation: block.name for operation, block in _TF_RESOURCES.items()}
    field_word = "argument"
    maker = "Terraform"
    delete_endpoint = ("# delete: remove the aws_sagemaker_endpoint of {endpoint} and keep its "
                       "aws_sagemaker_endpoint_configuration")
    update_endpoint = ("# UpdateEndpoint: the endpoint's resource in its module, with the new config and the "
                       "deployment policy")

    def described(self, kind: str) -> str:
        return f"{TERRAFORM_PROVIDER}'s {kind}"

    def name(self, plan_id: Any, operation: str, index: int) -> str:
        return re.sub(r"[^a-z0-9_]", "_", f"plan_{plan_id}_{_snake(operation)}_{index}".lower())

    def body(self, operation: str, params: dict[str, Any]) -> tuple[Any, list[str]]:
        left_out: list[str] = []
        return _hcl_body(params, _TF_RESOURCES[operation], 1, "", left_out), left_out

    def refer_to_config(self, config: _Declared) -> Any:
        return _Expression(f"{config.kind}.{config.name}.name")

    def refer_to_alarm(self, alarm: _Declared) -> Any:
        return _Expression(f"{alarm.kind}.{alarm.name}.alarm_name")

    def refer_to_answer(self, resource: _Declared, answer_field: str) -> Any:
        return _Expression(f"{resource.kind}.{resource.name}.{_TF_ANSWERS.get(answer_field, _snake(answer_field))}")

    def refer_to_target(self, params: dict[str, Any], target: _Declared) -> dict[str, Any]:
        return {**params, **{key: _Expression(f"{target.kind}.{target.name}.{attribute}")
                             for key, attribute in _TARGET_KEYS.items()}}

    def withheld(self, plan: dict[str, Any], call: dict[str, Any], declared: _Declarations) -> list[_Item] | None:
        """A config with a ScaleInPolicy (hashicorp/aws 5.100.0's managed_instance_scaling has only
        status, min_instance_count and max_instance_count): declaring it without the policy would make
        another config than the plan's, so it is made with the AWS CLI, and so is the update to it."""
        operation, params = call.get("operation"), call.get("params") or {}
        region = stated_resource(plan).get("region") or ""
        if operation == "CreateEndpointConfig":
            policies = _scale_in_policies(params)
            if not policies:
                return None
            declared.withheld.add(str(params.get("EndpointConfigName")))
            return [f"# CreateEndpointConfig: not declared: {TERRAFORM_PROVIDER}'s managed_instance_scaling block has "
                    "only status, min_instance_count and max_instance_count, so the ScaleInPolicy "
                    f"{_line('; '.join(policies))} cannot be declared with this provider version (a config "
                    "declared without it would not be the plan's). Make the config with the AWS CLI:",
                    f"#   {_line(_cli_command(call, region))}"]
        if operation == "UpdateEndpoint" and str(params.get("EndpointConfigName")) in declared.withheld:
            return ["# UpdateEndpoint: then switch the endpoint to that config with the AWS CLI (after terraform "
                    "apply has made the alarms declared here, if any):",
                    f"#   {_line(_cli_command(call, region))}",
                    "# where the endpoint is declared in Terraform, set its endpoint_config_name to "
                    f"{_line(params.get('EndpointConfigName'))} once it is InService (and keep that config out of "
                    "Terraform until the provider declares scale_in_policy), or its next apply switches it back"]
        if operation == "CreateEndpoint" and str(params.get("EndpointConfigName")) in declared.withheld:
            return ["# CreateEndpoint: then create the endpoint on that config with the AWS CLI (a new endpoint on a "
                    "config Terraform does not declare: import both once the provider declares scale_in_policy):",
                    f"#   {_line(_cli_command(call, region))}"]
        return None

    def layout(self, items: list[_Item]) -> list[str]:
        lines = [f"# for {TERRAFORM_PROVIDER}"]
        for item in items:
            if isinstance(item, _Declared):
                lines.extend([f'resource "{item.kind}" "{item.name}" {{', *item.body, "}"])
            else:
                lines.append(item)
        return lines


def _scale_in_policies(params: Mapping[str, Any]) -> list[str]:
    """"variant <name>: <ScaleInPolicy as JSON>" for each variant of a CreateEndpointConfig body that sets one."""
    found = []
    for key in ("ProductionVariants", "ShadowProductionVariants"):
        for variant in params.get(key) or []:
            scaling = variant.get("ManagedInstanceScaling") if isinstance(variant, Mapping) else None
            if isinstance(scaling, Mapping) and scaling.get("ScaleInPolicy"):
                found.append(f"of variant {variant.get('VariantName')} "
                             f"{json.dumps(scaling['ScaleInPolicy'], sort_keys=True)}")
    return found


def _cli_command(call: Mapping[str, Any], region: str) -> str:
    """One call as an AWS CLI command line (as `--as cli` writes it)."""
    return (f"aws {_word(call['service'])} {_word(_kebab(call['operation']))} --region {_word(region)} "
            f"--cli-input-json {shlex.quote(json.dumps(call['params'], sort_keys=True))}")


_CLOUDFORMATION = _CloudFormation()
_TERRAFORM = _Terraform()


def _cloudformation(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any], notes: list[str]) -> str:
    return _declare(_CLOUDFORMATION, plan, change, risk, notes)


def _terraform(plan: dict[str, Any], change: dict[str, Any], risk: dict[str, Any], notes: list[str]) -> str:
    return _declare(_TERRAFORM, plan, change, risk, notes)
