"""UpdateEndpoint for the emulator (moto has none), as SageMaker runs one, so that `audit apply`
runs end to end in the demo and the tests.

- The call needs an InService endpoint and an existing config; the endpoint turns Updating at once,
  DescribeEndpoint shows the PendingDeploymentSummary (the new config and its variants) and, with a
  DeploymentConfig, LastDeploymentConfig; its EndpointConfigName stays the old one meanwhile.
- After `UpdateBehaviour.seconds` it is InService on the new config, its variants the new ones.
- A deployment whose new config runs an instance type the emulator is told to fail
  (`fail_instance_types`) turns RollingBack, then InService on the OLD config with FailureReason
  set: what SageMaker shows after an automatic rollback.

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


_PENDING: dict[int, _Deployment] = {}
_LOCK = threading.RLock()
_INSTALLED: list[bool] = []


def _update_endpoint(self: Any, endpoint_name: str, endpoint_config_name: str,
                     deployment_config: dict[str, Any] | None) -> str:
    with _LOCK:
        _settle(self)
        endpoint = self.endpoints.get(endpoint_name)
        if endpoint is None:
            arn = FakeEndpoint.arn_formatter(endpoint_name, self.account_id, self.region_name)
            raise ValidationError(message=f"Could not find endpoint '{arn}'.")
        if endpoint.endpoint_status != "InService":
            raise ValidationError(message=f'Cannot update in-progress endpoint "{endpoint.arn}".')
        config = self.endpoint_configs.get(endpoint_config_name)
        if config is None:
            arn = FakeEndpointConfig.arn_formatter(endpoint_config_name, self.account_id, self.region_name)
            raise ValidationError(message=f"Could not find endpoint configuration '{arn}'.")
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
                 "VariantStatus": [{"Status": "Creating", "StartTime": now}]}
                for v in variants
            ],
        }
        if deployment_config:
            endpoint.last_deployment_config = deployment_config
        fails = any(v.get("InstanceType") in BEHAVIOUR.fail_instance_types for v in variants)
        _PENDING[id(endpoint)] = _Deployment(endpoint, self, endpoint_config_name, fails,
                                             time.monotonic() + BEHAVIOUR.seconds)
        return str(endpoint.arn)


def _settle(backend: Any) -> None:
    """Finish (or roll back) this backend's deployments whose time has come."""
    with _LOCK:
        clock = time.monotonic()
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
                endpoint.production_variants = endpoint._process_production_variants(config.production_variants)


def _update_endpoint_response(self: Any) -> Any:
    from moto.core.responses import ActionResult

    arn = self.sagemaker_backend.update_endpoint(
        endpoint_name=self._get_param("EndpointName"),
        endpoint_config_name=self._get_param("EndpointConfigName"),
        deployment_config=self._get_param("DeploymentConfig"),
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
        SageMakerModelBackend.describe_endpoint = _settling(  # type: ignore[method-assign]
            SageMakerModelBackend.describe_endpoint)
        SageMakerModelBackend.search = _settling(SageMakerModelBackend.search)  # type: ignore[method-assign]
        SageMakerResponse.update_endpoint = _update_endpoint_response  # type: ignore[attr-defined]
        FakeEndpointConfig.validate_instance_type = _catalog_instance_types(  # type: ignore[method-assign]
            FakeEndpointConfig.validate_instance_type)
        _INSTALLED.append(True)


def set_update_behaviour(seconds: float | None = None, fail_instance_types: tuple[str, ...] | None = None) -> None:
    """How the emulator's deployments go: how long they take, which instance types fail (and roll back)."""
    with _LOCK:
        if seconds is not None:
            BEHAVIOUR.seconds = seconds
        if fail_instance_types is not None:
            BEHAVIOUR.fail_instance_types = frozenset(fail_instance_types)
