"""Writes the emulator answers as AWS does where moto 5.2.5 does not, because `audit apply`'s guards,
retries and undo depend on them:

- CreateEndpointConfig and CreateEndpoint with a name that exists fail (ValidationException
  `Cannot create already existing endpoint configuration "<arn>".`); moto overwrites silently,
  which hid a retry failing on its own first attempt's config.
- DeregisterScalableTarget also deletes the target's scaling policies (and their alarms) and its
  scheduled actions, as Application Auto Scaling does; moto kept both. Deregistering a target that
  does not exist is ObjectNotFoundException (moto: ValidationException).
- PutScalingPolicy and PutScheduledAction need a registered scalable target
  (ObjectNotFoundException "No scalable target registered for ..."); moto accepted them.
- RegisterScalableTarget of a new target without SuspendedState records all three flags false (AWS
  describes them so; moto answered null). DescribeScalingPolicies filters ResourceId exactly and
  honours PolicyNames (moto matched substrings and ignored the names).

- PutScalingPolicy on a policy that exists updates it and keeps its PolicyARN (moto made a new one,
  which orphaned the alarms whose AlarmActions name it).
- DescribeScalingPolicies (and PutScalingPolicy's answer) list a policy's alarms as AWS does: those
  it made (target tracking) and every CloudWatch alarm whose AlarmActions name the policy's ARN
  (step scaling: PutMetricAlarm with AlarmActions=[PolicyARN]); moto listed only its own.

Scaling policies round-trip as put: TargetTrackingScalingPolicyConfiguration (predefined or
CustomizedMetricSpecification, cooldowns, DisableScaleIn) and StepScalingPolicyConfiguration come
back from DescribeScalingPolicies exactly as PutScalingPolicy sent them (moto stores the request's
structure; tests/test_emulator_writes.py holds it). What moto still does not do: create the
CloudWatch alarms of a SageMaker target-tracking policy (AWS makes two, AlarmHigh and AlarmLow).
"""

from __future__ import annotations

import threading
from typing import Any

try:  # moto is the `demo` extra
    from moto.applicationautoscaling import models as scaling_models
    from moto.applicationautoscaling import responses as scaling_responses
    from moto.core.exceptions import JsonRESTError
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.models import FakeEndpoint, FakeEndpointConfig, SageMakerModelBackend
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerModelBackend = None  # type: ignore[assignment,misc]

_LOCK = threading.Lock()
_INSTALLED: list[bool] = []
NOT_SUSPENDED = {"DynamicScalingInSuspended": False, "DynamicScalingOutSuspended": False,
                 "ScheduledScalingSuspended": False}


def _object_not_found(message: str) -> Exception:
    return JsonRESTError("ObjectNotFoundException", message)


def _refuse_existing_config(original: Any) -> Any:
    def create_endpoint_config(self: Any, endpoint_config_name: str, *args: Any, **kwargs: Any) -> Any:
        if endpoint_config_name in self.endpoint_configs:
            arn = FakeEndpointConfig.arn_formatter(endpoint_config_name, self.account_id, self.region_name)
            raise ValidationError(message=f'Cannot create already existing endpoint configuration "{arn}".')
        return original(self, endpoint_config_name, *args, **kwargs)
    return create_endpoint_config


def _refuse_existing_endpoint(original: Any) -> Any:
    def create_endpoint(self: Any, endpoint_name: str, *args: Any, **kwargs: Any) -> Any:
        if endpoint_name in self.endpoints:
            arn = FakeEndpoint.arn_formatter(endpoint_name, self.account_id, self.region_name)
            raise ValidationError(message=f'Cannot create already existing endpoint "{arn}".')
        return original(self, endpoint_name, *args, **kwargs)
    return create_endpoint


def _target_exists(backend: Any, namespace: str, resource_id: str, dimension: str) -> bool:
    target = backend.targets.get(dimension, {}).get(resource_id)
    return target is not None and target.service_namespace == namespace


def _deregister_with_policies(self: Any, namespace: str, r_id: str, dimension: str) -> None:
    if not _target_exists(self, namespace, r_id, dimension):
        raise _object_not_found(f"No scalable target found for service namespace: {namespace}, resource ID: {r_id}, "
                                f"scalable dimension: {dimension}")
    del self.targets[dimension][r_id]
    for key, policy in list(self.policies.items()):
        if (policy.service_namespace, policy.resource_id, policy.scalable_dimension) == (namespace, r_id, dimension):
            policy.delete_alarms(self.account_id, self.region_name)
            del self.policies[key]
    self.scheduled_actions = [
        a for a in self.scheduled_actions
        if (a.service_namespace, a.resource_id, a.scalable_dimension) != (namespace, r_id, dimension)]


def _needs_target(original: Any, namespace_key: str, resource_key: str, dimension_key: str) -> Any:
    def put(self: Any, *args: Any, **kwargs: Any) -> Any:
        namespace, r_id, dimension = kwargs[namespace_key], kwargs[resource_key], kwargs[dimension_key]
        if not _target_exists(self, namespace, r_id, dimension):
            raise _object_not_found(f"No scalable target registered for service namespace: {namespace}, resource "
                                    f"ID: {r_id}, scalable dimension: {dimension}")
        return original(self, *args, **kwargs)
    return put


def _register_not_suspended(original: Any) -> Any:
    def register(self: Any, namespace: str, r_id: str, dimension: str, min_capacity: int | None,
                 max_capacity: int | None, role_arn: str, suspended_state: dict[str, bool] | None) -> Any:
        if suspended_state is None and not _target_exists(self, namespace, r_id, dimension):
            suspended_state = dict(NOT_SUSPENDED)
        elif suspended_state is not None:
            suspended_state = {**NOT_SUSPENDED, **suspended_state}
        return original(self, namespace, r_id, dimension, min_capacity=min_capacity, max_capacity=max_capacity,
                        role_arn=role_arn, suspended_state=suspended_state)
    return register


def _exact_describe_scaling_policies(self: Any) -> str:
    import json

    backend = self.applicationautoscaling_backend
    names = self._get_param("PolicyNames") or []
    resource_id = self._get_param("ResourceId")
    dimension = self._get_param("ScalableDimension")
    found = [p for p in backend.policies.values()
             if p.service_namespace == self._get_param("ServiceNamespace")
             and (not resource_id or p.resource_id == resource_id)
             and (not dimension or p.scalable_dimension == dimension)
             and (not names or p.policy_name in names)]
    start = int(self._get_param("NextToken") or 0)
    end = start + (self._get_int_param("MaxResults") or 50)
    answer: dict[str, Any] = {"ScalingPolicies": [scaling_responses._build_policy(p) for p in found[start:end]]}
    if end < len(found):
        answer["NextToken"] = str(end)
    return json.dumps(answer)


def _keeping_policy_arn(original: Any) -> Any:
    def put(self: Any, *args: Any, **kwargs: Any) -> Any:
        key = scaling_models.FakeApplicationAutoscalingPolicy.formulate_key(
            kwargs["service_namespace"], kwargs["resource_id"], kwargs["scalable_dimension"], kwargs["policy_name"])
        old = self.policies.get(key)
        policy = original(self, *args, **kwargs)
        if old is not None:
            policy._guid, policy.policy_arn = old._guid, old.policy_arn
        return policy
    return put


def _alarms_naming_policy(policy: Any) -> list[dict[str, str]]:
    """The alarms that trigger the policy: its own (target tracking) and those whose actions name it."""
    from moto.cloudwatch.models import cloudwatch_backends

    alarms = {a.name: a.alarm_arn for a in policy.alarms}
    cloudwatch = cloudwatch_backends[policy.account_id][policy.region_name]
    for alarm in cloudwatch.alarms.values():
        if policy.policy_arn in (alarm.alarm_actions or []):
            alarms.setdefault(alarm.name, alarm.alarm_arn)
    return [{"AlarmName": name, "AlarmARN": arn} for name, arn in alarms.items()]


def install_writes() -> None:
    """Make these writes behave as AWS's (once per process)."""
    with _LOCK:
        if _INSTALLED:
            return
        SageMakerModelBackend.create_endpoint_config = _refuse_existing_config(  # type: ignore[method-assign]
            SageMakerModelBackend.create_endpoint_config)
        SageMakerModelBackend.create_endpoint = _refuse_existing_endpoint(  # type: ignore[method-assign]
            SageMakerModelBackend.create_endpoint)
        backend = scaling_models.ApplicationAutoscalingBackend
        backend.deregister_scalable_target = _deregister_with_policies  # type: ignore[method-assign]
        backend.register_scalable_target = _register_not_suspended(  # type: ignore[method-assign]
            backend.register_scalable_target)
        backend.put_scaling_policy = _needs_target(  # type: ignore[method-assign]
            _keeping_policy_arn(backend.put_scaling_policy), "service_namespace", "resource_id", "scalable_dimension")
        scaling_responses._build_alarms = _alarms_naming_policy
        backend.put_scheduled_action = _needs_target(  # type: ignore[method-assign]
            backend.put_scheduled_action, "service_namespace", "resource_id", "scalable_dimension")
        scaling_responses.ApplicationAutoScalingResponse.describe_scaling_policies = (  # type: ignore[method-assign]
            _exact_describe_scaling_policies)
        _INSTALLED.append(True)
