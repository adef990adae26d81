"""What a stored plan's calls do, not only what they name (the history file is untrusted): each
call carries only the parameter keys the change builders emit; alarms notify only [apply]
alarm_topic_arn; scaling capacities and policies are the plan's own or the variant's as the audit
saw them; a deregister is always followed by the update and the target registered again;
UpdateDomain sets only the app settings the plan copies. Every demo plan (and alternative) passes;
the crafted plans of the review are refused in the dry run already (plan_refusal), one line naming
the call and the key."""

from __future__ import annotations

from typing import Any

from auditor.act.binding import OPERATIONS_BY_TYPE, PARAMETER_KEYS, content_refusal
from auditor.act.guards import plan_refusal
from auditor.act.plan import parse_plan, recomputed_id
from auditor.config import ApplyConfig
from auditor.recommend.change import resource_name
from helpers import resource_json
from test_change_forms import TOPIC, demo_plans  # noqa: F401  (the module's fixture: the demo fleet audited once)

CONFIG = ApplyConfig(role_arn="arn:aws:iam::123456789012:role/SageMakerAuditorApply", max_risk="high",
                     alarm_topic_arn=TOPIC)
RESOURCE = "endpoint/reports/variant/AllTraffic"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
BASE: dict[str, Any] = {
    "resource": resource_json("reports"), "variant": "AllTraffic",
    "current": {"endpoint_config_name": "reports-config"}, "measured": True,
    "risk": {"level": "low"},
    "proposed": {"action": "resize", "instance_type": "ml.m5.large", "instance_count": 2},
    "basis": {"variants": [{"name": "AllTraffic", "autoscaling": {
        "min_capacity": 2, "max_capacity": 6, "policies": ["reports-scaling (TargetTrackingScaling)"]}}]}}
PLAN_ID = str(recomputed_id(BASE, BASE["proposed"]))
CONFIG_NAME = resource_name("reports", PLAN_ID)
TARGET = {"ServiceNamespace": "sagemaker", "ResourceId": RESOURCE, "ScalableDimension": DIMENSION}
CARRIED_POLICY = {"PolicyName": "reports-scaling", **TARGET, "PolicyType": "TargetTrackingScaling",
                  "TargetTrackingScalingPolicyConfiguration": {
                      "TargetValue": 70.0, "PredefinedMetricSpecification": {
                          "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}}}
CREATE = ("sagemaker", "CreateEndpointConfig", {"EndpointConfigName": CONFIG_NAME, "ProductionVariants": [
    {"VariantName": "AllTraffic", "ModelName": "reports-model", "InstanceType": "ml.m5.large",
     "InitialInstanceCount": 2}]})
UPDATE = ("sagemaker", "UpdateEndpoint", {"EndpointName": "reports", "EndpointConfigName": CONFIG_NAME})
DEREGISTER = ("application-autoscaling", "DeregisterScalableTarget", dict(TARGET))
REGISTER = ("application-autoscaling", "RegisterScalableTarget", {**TARGET, "MinCapacity": 2, "MaxCapacity": 6})
PUT_POLICY = ("application-autoscaling", "PutScalingPolicy", CARRIED_POLICY)


def refusal(*calls: tuple[str, str, dict[str, Any]], plan: dict[str, Any] | None = None,
            restore: tuple[tuple[str, str, dict[str, Any]], ...] = (PUT_POLICY,)) -> str | None:
    """plan_refusal (what the dry run says) of the endpoint plan with these calls."""
    def listed(made: tuple[tuple[str, str, dict[str, Any]], ...]) -> list[dict[str, Any]]:
        return [{"service": s, "operation": o, "params": p} for s, o, p in made]
    stored = {**(plan or BASE), "id": PLAN_ID, "change": {"calls": listed(calls), "restore": listed(restore)}}
    return plan_refusal(parse_plan(stored), CONFIG)


def test_a_resize_of_an_autoscaled_variant_as_change_py_builds_it_passes() -> None:
    assert refusal(CREATE, DEREGISTER, UPDATE, REGISTER, PUT_POLICY) is None


def test_a_key_no_builder_emits_is_refused_naming_it() -> None:
    alarm = {"AlarmName": f"reports-AllTraffic-{PLAN_ID}-5xx", "Dimensions": [{"Name": "EndpointName",
             "Value": "reports"}], "MetricName": "Invocation5XXErrors", "Namespace": "AWS/SageMaker",
             "EvaluationPeriods": 1, "ComparisonOperator": "GreaterThanThreshold", "Threshold": 0.0, "Period": 60,
             "Statistic": "Sum", "InsufficientDataActions": ["arn:aws:sns:us-east-1:999999999999:elsewhere"],
             "Unit": "Count"}
    assert refusal(("cloudwatch", "PutMetricAlarm", alarm)) == (
        f"plan {PLAN_ID} (reports): call 1 (cloudwatch:PutMetricAlarm) sets InsufficientDataActions, Unit, which no "
        "plan's change sets")
    update = {**UPDATE[2], "RetainAllVariantProperties": True}
    assert refusal(CREATE, ("sagemaker", "UpdateEndpoint", update)) == (
        f"plan {PLAN_ID} (reports): call 2 (sagemaker:UpdateEndpoint) sets RetainAllVariantProperties, which no "
        "plan's change sets")


def test_an_alarm_notifies_only_the_configured_topic() -> None:
    alarm = {"AlarmName": "reports-ApproximateAgeOfOldestRequest", "Dimensions": [
        {"Name": "EndpointName", "Value": "reports"}], "MetricName": "ApproximateAgeOfOldestRequest",
        "Namespace": "AWS/SageMaker", "EvaluationPeriods": 1, "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": 600.0, "Period": 60, "Statistic": "Maximum", "AlarmActions": [TOPIC], "OKActions": [TOPIC]}
    assert refusal(("cloudwatch", "PutMetricAlarm", alarm)) is None
    foreign = {**alarm, "AlarmActions": ["arn:aws:sns:us-east-1:999999999999:elsewhere"]}
    assert refusal(("cloudwatch", "PutMetricAlarm", foreign)) == (
        f"plan {PLAN_ID} (reports): call 1 (cloudwatch:PutMetricAlarm) sets AlarmActions "
        f"arn:aws:sns:us-east-1:999999999999:elsewhere: alarms notify only [apply] alarm_topic_arn ({TOPIC})")


def test_capacities_and_policies_are_the_plans_or_the_audited_ones() -> None:
    one = ("application-autoscaling", "RegisterScalableTarget", {**TARGET, "MinCapacity": 1, "MaxCapacity": 1})
    assert refusal(CREATE, DEREGISTER, UPDATE, one) == (
        f"plan {PLAN_ID} (reports): call 4 (application-autoscaling:RegisterScalableTarget) sets "
        f"MinCapacity-MaxCapacity 1-1 on {RESOURCE}: the plan's or the audited ones are 2-6")
    loose = {**CARRIED_POLICY, "TargetTrackingScalingPolicyConfiguration": {
        **CARRIED_POLICY["TargetTrackingScalingPolicyConfiguration"], "TargetValue": 100000.0}}
    assert refusal(CREATE, DEREGISTER, UPDATE, REGISTER, ("application-autoscaling", "PutScalingPolicy", loose)) == (
        f"plan {PLAN_ID} (reports): call 5 (application-autoscaling:PutScalingPolicy) puts policy reports-scaling "
        "with settings that are neither the plan's proposed policy nor the variant's as the audit read it "
        "(change.restore)")
    # The plan's own policy: exactly as change.py builds it from the proposed option.
    proposed = {"action": "autoscale", "instance_type": "ml.m5.large", "instance_count": 2, "autoscaling": {
        "MinCapacity": 1, "MaxCapacity": 4, "TargetValue": 50.0,
        "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}}
    autoscale = {**BASE, "proposed": proposed}
    own_id = str(recomputed_id(autoscale, proposed))
    own = {"PolicyName": f"{resource_name('reports', own_id, limit=200)}-AllTraffic", **TARGET,
           "PolicyType": "TargetTrackingScaling", "TargetTrackingScalingPolicyConfiguration": {
               "TargetValue": 50.0, "PredefinedMetricSpecification": {
                   "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
               "ScaleInCooldown": 300, "ScaleOutCooldown": 60}}
    register = ("application-autoscaling", "RegisterScalableTarget", {**TARGET, "MinCapacity": 1, "MaxCapacity": 4})

    def autoscaled(*calls: tuple[str, str, dict[str, Any]]) -> str | None:
        stored = {**autoscale, "id": own_id, "change": {"calls": [
            {"service": s, "operation": o, "params": p} for s, o, p in calls]}}
        return plan_refusal(parse_plan(stored), CONFIG)

    assert autoscaled(register, ("application-autoscaling", "PutScalingPolicy", own)) is None
    assert autoscaled(register, ("application-autoscaling", "PutScalingPolicy", {
        **own, "TargetTrackingScalingPolicyConfiguration": {**own["TargetTrackingScalingPolicyConfiguration"],
                                                            "DisableScaleIn": True}})) is not None


def test_a_deregister_needs_the_update_and_the_target_registered_again_after_it() -> None:
    assert refusal(DEREGISTER) == (
        f"plan {PLAN_ID} (reports): call 1 (application-autoscaling:DeregisterScalableTarget) deregisters "
        f"{RESOURCE} with no UpdateEndpoint after it")
    assert refusal(CREATE, DEREGISTER, UPDATE) == (
        f"plan {PLAN_ID} (reports): call 2 (application-autoscaling:DeregisterScalableTarget) deregisters "
        f"{RESOURCE} and no RegisterScalableTarget after the UpdateEndpoint puts it back")
    assert refusal(CREATE, UPDATE, DEREGISTER, REGISTER) is not None  # the update before the deregister
    serverless = {**BASE, "proposed": {"action": "serverless", "details": {"memory_size_mb": 2048}}}
    serverless_id = str(recomputed_id(serverless, serverless["proposed"]))
    config = resource_name("reports", serverless_id)
    stored = {**serverless, "id": serverless_id, "change": {"calls": [
        {"service": s, "operation": o, "params": p} for s, o, p in (
            ("sagemaker", "CreateEndpointConfig", {**CREATE[2], "EndpointConfigName": config}), DEREGISTER,
            ("sagemaker", "UpdateEndpoint", {**UPDATE[2], "EndpointConfigName": config}))]}}
    assert plan_refusal(parse_plan(stored), CONFIG) is None  # a serverless variant has no target to put back


def test_update_domain_sets_only_the_app_settings_the_plan_copies() -> None:
    domain: dict[str, Any] = {"resource": resource_json("d-abc", "studio-domain"), "current": {},
                              "proposed": {"action": "idle-shutdown"},
                              "measured": True, "risk": {"level": "low"}}
    domain["id"] = recomputed_id(domain, domain["proposed"])
    lab = {"JupyterLabAppSettings": {"AppLifecycleManagement": {"IdleSettings": {
        "LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 60}}}}

    def update(params: dict[str, Any]) -> str | None:
        stored = {**domain, "change": {"calls": [{"service": "sagemaker", "operation": "UpdateDomain",
                                                  "params": params}]}}
        return content_refusal(parse_plan(stored), CONFIG)

    assert update({"DomainId": "d-abc", "DefaultUserSettings": lab}) is None
    assert update({"DomainId": "d-abc", "AppNetworkAccessType": "PublicInternetOnly", "DefaultUserSettings": lab}) == (
        "call 1 (sagemaker:UpdateDomain) sets AppNetworkAccessType, which no plan's change sets")
    lifecycle = {**lab, "JupyterServerAppSettings": {"DefaultResourceSpec": {
        "LifecycleConfigArn": "arn:aws:sagemaker:us-east-1:123456789012:studio-lifecycle-config/evil"}}}
    assert update({"DomainId": "d-abc", "DefaultUserSettings": lifecycle}) == (
        "call 1 (sagemaker:UpdateDomain) sets DefaultUserSettings.JupyterServerAppSettings: the plan sets only "
        "CodeEditorAppSettings and JupyterLabAppSettings")


def test_every_demo_plans_change_passes_the_content_checks(demo_plans: list[dict[str, Any]]) -> None:  # noqa: F811
    """The allow-list and the checks admit every call the builders emit: each demo plan and each of
    its alternatives, as apply reads it (parse_plan with --option N)."""
    checked = set()
    applied = [p for p in demo_plans if "-alt" not in str(p["id"]) and p["resource"]["type"] in OPERATIONS_BY_TYPE]
    for stored in applied:  # (a job's plan is never applied: its change is the next run's request)
        alternatives = stored.get("alternatives") or []
        for option in [0, *(i for i, a in enumerate(alternatives, 1) if a.get("change"))]:
            if option == 0 and not stored.get("change"):
                continue
            plan = parse_plan(stored, option)
            assert content_refusal(plan, CONFIG) is None, (stored["id"], option)
            checked |= {c.operation for c in plan.change.calls} if plan.change else set()
    assert checked >= {"CreateEndpointConfig", "UpdateEndpoint", "DeleteEndpoint", "RegisterScalableTarget",
                       "PutScalingPolicy", "PutMetricAlarm", "CreateSchedule", "StopNotebookInstance",
                       "BatchDeleteClusterNodes"}, checked
    assert checked <= set(PARAMETER_KEYS)
