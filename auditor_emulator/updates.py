"""UpdateEndpoint for the emulator (moto has none), as SageMaker runs one, so that `audit apply`
runs end to end in the demo and the tests.

- The call needs an InService endpoint and an existing config; the endpoint turns Updating at once,
  DescribeEndpoint shows the PendingDeploymentSummary (the new config and its variants) and, with a
  DeploymentConfig, LastDeploymentConfig; its EndpointConfigName stays the old one meanwhile.
- After `UpdateBehaviour.seconds` it is InService on the new config, its variants the new ones.
- A deployment whose new config runs an instance type the emulator is told to fail
  (`fail_instance_types`) turns RollingBack, then InService on the OLD config with FailureReason
  set: what SageMaker shows after an automatic rollback.

- CreateEndpoint: InService at once, as moto makes it, unless `UpdateBehaviour.create_seconds` is
  set: then Creating for that long, then InService, or Failed (FailureReason set) when its config
  runs an instance type the emulator is told to fail.

- An update that changes the instance type of a variant registered with Application Auto Scaling,
  or drops such a variant, fails (ValidationException; AWS's guide "Update endpoints that use auto
  scaling" says the call fails, not with which words: the message here is the emulator's). Changing
  only its model or count is allowed.
- DeleteEndpoint deregisters the endpoint's scalable targets (and so their policies), as AWS does
  for a caller who may.
- `RetainAllVariantProperties=True` keeps each variant's live DesiredInstanceCount and weight (for
  variants of the same name), as SageMaker does; otherwise the new config's counts apply.
- UpdateEndpointWeightsAndCapacities (moto's changes the counts at once and never refuses): needs an
  InService endpoint and variants it runs; the endpoint is Updating for `UpdateBehaviour.seconds`
  with each named variant's DesiredInstanceCount / DesiredWeight set and its Current ones unchanged,
  then InService with Current = Desired. The EndpointConfigName stays the same (no new config).

State advances when DescribeEndpoint or Search is answered (no timer threads). Also: moto checks
instance types against an old list; configs may use any type the bundled catalog prices.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

try:  # moto is the `demo` extra
    from moto.core.utils import utcnow
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.models import FakeEndpoint, FakeEndpointConfig, SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerModelBackend = None  # type: ignore[assignment,misc]


@dataclass
class UpdateBehaviour:
    seconds: float = 2.0  # how long a deployment takes (and a rollback after it)
    create_seconds: float = 0.0  # how long CreateEndpoint leaves an endpoint Creating (0: InService at once)
    fail_instance_types: frozenset[str] = field(default_factory=frozenset)


BEHAVIOUR = UpdateBehaviour()


@dataclass
class _Deployment:
    endpoint: Any
    backend: Any
    config_name: str
    fails: bool
    due: float
    rolling_back: bool = False
    retain_variant_properties: bool = False
    capacities_only: bool = False  # UpdateEndpointWeightsAndCapacities: the config stays, Current = Desired


_PENDING: dict[int, _Deployment] = {}
_LOCK = threading.RLock()
_INSTALLED: list[bool] = []


def _updatable_endpoint(backend: Any, endpoint_name: str) -> Any:
    """The endpoint, if it exists and is InService (SageMaker refuses an update of one that is not)."""
    endpoint = backend.endpoints.get(endpoint_name)
    if endpoint is None:
        arn = FakeEndpoint.arn_formatter(endpoint_name, backend.account_id, backend.region_name)
        raise ValidationError(message=f"Could not find endpoint '{arn}'.")
    if endpoint.endpoint_status != "InService":
        raise ValidationError(message=f'Cannot update in-progress endpoint "{endpoint.arn}".')
    return endpoint


def _update_endpoint(self: Any, endpoint_name: str, endpoint_config_name: str,
                     deployment_config: dict[str, Any] | None, retain_all_variant_properties: bool = False) -> str:
    with _LOCK:
        _settle(self)
        endpoint = _updatable_endpoint(self, endpoint_name)
        config = self.endpoint_configs.get(endpoint_config_name)
        if config is None:
            arn = FakeEndpointConfig.arn_formatter(endpoint_config_name, self.account_id, self.region_name)
            raise ValidationError(message=f"Could not find endpoint configuration '{arn}'.")
        _refuse_autoscaled_type_change(self, endpoint, config)
        now = utcnow()
        variants = config.production_variants or []
        endpoint.endpoint_status = "Updating"
        endpoint.failure_reason = None
        endpoint.last_modified_time = now
        endpoint.pending_deployment_summary = {
            "EndpointConfigName": endpoint_config_name,
            "StartTime": now,
            "ProductionVariants": [
                {"VariantName": v["VariantName"], "InstanceType": v.get("InstanceType"),
                 "DesiredInstanceCount": v.get("InitialInstanceCount"), "CurrentInstanceCount": 0,
                 "DesiredWeight": v.get("InitialVariantWeight", 1.0),
                 "VariantStatus": [{"Status": "Creating", "StartTime": now}],
                 **{k: v[k] for k in ("ManagedInstanceScaling", "RoutingConfig") if v.get(k) is not None}}
                for v in variants
            ],
        }
        if deployment_config:
            endpoint.last_deployment_config = deployment_config
        fails = any(v.get("InstanceType") in BEHAVIOUR.fail_instance_types for v in variants)
        _PENDING[id(endpoint)] = _Deployment(endpoint, self, endpoint_config_name, fails,
                                             time.monotonic() + BEHAVIOUR.seconds,
                                             retain_variant_properties=retain_all_variant_properties)
        return str(endpoint.arn)


VARIANT_DIMENSION = "sagemaker:variant:DesiredInstanceCount"


def _scalable_variants(backend: Any, endpoint_name: str) -> list[tuple[str, str]]:
    """(variant name, resource id) of this endpoint's variants registered with Application Auto Scaling."""
    from moto.applicationautoscaling.models import applicationautoscaling_backends

    scaling = applicationautoscaling_backends[backend.account_id][backend.region_name]
    prefix = f"endpoint/{endpoint_name}/variant/"
    return [(resource_id[len(prefix):], resource_id)
            for resource_id, target in scaling.targets.get(VARIANT_DIMENSION, {}).items()
            if resource_id.startswith(prefix) and target.service_namespace == "sagemaker"]


def _refuse_autoscaled_type_change(backend: Any, endpoint: Any, config: Any) -> None:
    current = backend.endpoint_configs.get(endpoint.endpoint_config_name)
    if current is None:
        return  # the live config was deleted: its instance types are unknown here
    old = {v["VariantName"]: v.get("InstanceType") for v in current.production_variants or []}
    new = {v["VariantName"]: v.get("InstanceType") for v in config.production_variants or []}
    changed = [name for name, _ in _scalable_variants(backend, endpoint.endpoint_name)
               if name in old and new.get(name, "") != old[name]]
    if changed:
        raise ValidationError(message=(
            f'The variant(s) "{", ".join(sorted(changed))}" of endpoint "{endpoint.arn}" are registered with '
            "Application Auto Scaling: deregister them (DeregisterScalableTarget) before changing their instance "
            "type or removing them."))


def _deregistering_delete(original: Any) -> Any:
    def delete_endpoint(self: Any, endpoint_name: str) -> None:
        original(self, endpoint_name)
        from moto.applicationautoscaling.models import applicationautoscaling_backends

        scaling = applicationautoscaling_backends[self.account_id][self.region_name]
        for _, resource_id in _scalable_variants(self, endpoint_name):
            scaling.deregister_scalable_target("sagemaker", resource_id, VARIANT_DIMENSION)
    return delete_endpoint


def _update_endpoint_weights_and_capacities(self: Any, endpoint_name: str,
                                            desired_weights_and_capacities: list[dict[str, Any]]) -> str:
    with _LOCK:
        _settle(self)
        endpoint = _updatable_endpoint(self, endpoint_name)
        by_name = {v["VariantName"]: v for v in endpoint.production_variants}
        named = [str(change.get("VariantName")) for change in desired_weights_and_capacities]
        if len(set(named)) != len(named):
            duplicate = next(n for n in named if named.count(n) > 1)
            raise ValidationError(message=f'The variant name "{duplicate}" was non-unique within the request.')
        unknown = [n for n in named if n not in by_name]
        if unknown:
            raise ValidationError(message=f'The variant name(s) "{", ".join(unknown)}" is/are not present within '
                                          f'endpoint configuration "{endpoint.endpoint_config_name}".')
        for change in desired_weights_and_capacities:
            if change.get("DesiredWeight") is None and change.get("DesiredInstanceCount") is None:
                raise ValidationError(message="Either DesiredWeight or DesiredInstanceCount must be specified for "
                                              f"variant {change['VariantName']}.")
        for change in desired_weights_and_capacities:
            variant = by_name[change["VariantName"]]
            variant.setdefault("CurrentWeight", 1.0)
            variant.setdefault("DesiredWeight", variant["CurrentWeight"])
            if change.get("DesiredWeight") is not None:
                variant["DesiredWeight"] = float(change["DesiredWeight"])
            if change.get("DesiredInstanceCount") is not None:
                variant["DesiredInstanceCount"] = int(change["DesiredInstanceCount"])
        endpoint.endpoint_status = "Updating"
        endpoint.failure_reason = None
        endpoint.last_modified_time = utcnow()
        _PENDING[id(endpoint)] = _Deployment(endpoint, self, endpoint.endpoint_config_name, False,
                                             time.monotonic() + BEHAVIOUR.seconds, capacities_only=True)
        return str(endpoint.arn)


# id -> (endpoint, backend, the variant whose instance type fails or None, when it is due)
_CREATING: dict[int, tuple[Any, Any, str | None, float]] = {}


def _creating(original: Any) -> Any:
    def create_endpoint(self: Any, *args: Any, **kwargs: Any) -> Any:
        endpoint = original(self, *args, **kwargs)
        if BEHAVIOUR.create_seconds > 0:
            with _LOCK:
                config = self.endpoint_configs.get(endpoint.endpoint_config_name)
                failing = next((v["VariantName"] for v in (config.production_variants if config else [])
                                if v.get("InstanceType") in BEHAVIOUR.fail_instance_types), None)
                endpoint.endpoint_status = "Creating"
                _CREATING[id(endpoint)] = (endpoint, self, failing, time.monotonic() + BEHAVIOUR.create_seconds)
        return endpoint
    return create_endpoint


def _settle_creations(backend: Any, clock: float) -> None:
    for key, (endpoint, owner, failing, due) in list(_CREATING.items()):
        if owner is not backend or clock < due:
            continue
        del _CREATING[key]
        if backend.endpoints.get(endpoint.endpoint_name) is not endpoint or endpoint.endpoint_status != "Creating":
            continue  # deleted meanwhile, or its state set by a seeder
        endpoint.last_modified_time = utcnow()
        if failing is not None:
            endpoint.endpoint_status = "Failed"
            endpoint.failure_reason = (f"The primary container for production variant {failing} did not pass the "
                                       "ping health check. Please check CloudWatch logs for this endpoint.")
        else:
            endpoint.endpoint_status = "InService"


def _settle(backend: Any) -> None:
    """Finish (or roll back) this backend's deployments whose time has come."""
    with _LOCK:
        clock = time.monotonic()
        _settle_creations(backend, clock)
        for key, deployment in list(_PENDING.items()):
            if deployment.backend is not backend or clock < deployment.due:
                continue
            endpoint = deployment.endpoint
            if backend.endpoints.get(endpoint.endpoint_name) is not endpoint:
                del _PENDING[key]  # deleted meanwhile
                continue
            if deployment.fails and not deployment.rolling_back:
                endpoint.endpoint_status = "RollingBack"
                deployment.rolling_back = True
                deployment.due = clock + BEHAVIOUR.seconds
                continue
            del _PENDING[key]
            endpoint.pending_deployment_summary = None
            endpoint.endpoint_status = "InService"
            endpoint.last_modified_time = utcnow()
            if deployment.capacities_only:
                for variant in endpoint.production_variants:
                    for field_name in ("InstanceCount", "Weight"):
                        if f"Desired{field_name}" in variant:
                            variant[f"Current{field_name}"] = variant[f"Desired{field_name}"]
                continue
            if deployment.fails:
                failing = next(v for v in backend.endpoint_configs[deployment.config_name].production_variants
                               if v.get("InstanceType") in BEHAVIOUR.fail_instance_types)
                endpoint.failure_reason = (
                    f"The primary container for production variant {failing['VariantName']} did not pass the ping "
                    f"health check on {failing['InstanceType']}. The update was rolled back to endpoint config "
                    f"{endpoint.endpoint_config_name}.")
                continue
            config = backend.endpoint_configs.get(deployment.config_name)
            endpoint.endpoint_config_name = deployment.config_name
            if config is not None:
                live = {v["VariantName"]: v for v in endpoint.production_variants}
                variants = endpoint._process_production_variants(config.production_variants)
                if deployment.retain_variant_properties:
                    for variant in variants:
                        kept = live.get(variant["VariantName"], {})
                        for field_name in ("InstanceCount", "Weight"):
                            if f"Desired{field_name}" in kept:
                                variant[f"Desired{field_name}"] = variant[f"Current{field_name}"] = \
                                    kept[f"Desired{field_name}"]
                endpoint.production_variants = variants


def _update_endpoint_response(self: Any) -> Any:
    from moto.core.responses import ActionResult

    arn = self.sagemaker_backend.update_endpoint(
        endpoint_name=self._get_param("EndpointName"),
        endpoint_config_name=self._get_param("EndpointConfigName"),
        deployment_config=self._get_param("DeploymentConfig"),
        retain_all_variant_properties=bool(self._get_param("RetainAllVariantProperties")),
    )
    return ActionResult({"EndpointArn": arn})


def _settling(original: Any) -> Any:
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        _settle(self)
        return original(self, *args, **kwargs)
    return wrapped


def _catalog_instance_types(original: Any) -> Any:
    from auditor.catalog import load_catalog

    catalog = load_catalog()

    def validate(self: Any, instance_type: str) -> None:
        if catalog.shape(instance_type) is None:
            original(self, instance_type)
    return validate


def install_update_endpoint() -> None:
    """Add UpdateEndpoint to the emulator's SageMaker (once per process)."""
    with _LOCK:
        if _INSTALLED:
            return
        SageMakerModelBackend.update_endpoint = _update_endpoint  # type: ignore[attr-defined]
        SageMakerModelBackend.create_endpoint = _creating(  # type: ignore[method-assign]
            SageMakerModelBackend.create_endpoint)
        SageMakerModelBackend.delete_endpoint = _deregistering_delete(  # type: ignore[method-assign]
            SageMakerModelBackend.delete_endpoint)
        SageMakerModelBackend.update_endpoint_weights_and_capacities = (  # type: ignore[method-assign]
            _update_endpoint_weights_and_capacities)
        SageMakerModelBackend.describe_endpoint = _settling(  # type: ignore[method-assign]
            SageMakerModelBackend.describe_endpoint)
        SageMakerModelBackend.search = _settling(SageMakerModelBackend.search)  # type: ignore[method-assign]
        SageMakerResponse.update_endpoint = _update_endpoint_response  # type: ignore[attr-defined]
        FakeEndpointConfig.validate_instance_type = _catalog_instance_types(  # type: ignore[method-assign]
            FakeEndpointConfig.validate_instance_type)
        _INSTALLED.append(True)


def set_update_behaviour(seconds: float | None = None, fail_instance_types: tuple[str, ...] | None = None,
                         create_seconds: float | None = None) -> None:
    """How the emulator's deployments go: how long they take, which instance types fail (and roll back),
    how long CreateEndpoint leaves an endpoint Creating."""
    with _LOCK:
        if create_seconds is not None:
            BEHAVIOUR.create_seconds = create_seconds
        if seconds is not None:
            BEHAVIOUR.seconds = seconds
        if fail_instance_types is not None:
            BEHAVIOUR.fail_instance_types = frozenset(fail_instance_types)
