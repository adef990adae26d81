"""Models, endpoint configs and endpoints as SageMaker answers them where moto 5.2.5 does not, for
endpoints that host inference components and for the network settings consolidation compares:

- CreateEndpointConfig takes a component-style variant: one that names no model (InstanceType,
  InitialInstanceCount, ManagedInstanceScaling with its ScaleInPolicy, RoutingConfig); moto failed
  with an internal error on the missing ModelName. A variant without a model must run on instances
  (ValidationException otherwise: SageMaker hosts no inference component on serverless capacity).
  DescribeEndpointConfig returns the variants exactly as given.
- CreateEndpointConfig keeps the config-level ExecutionRoleArn, VpcConfig, EnableNetworkIsolation
  and MetricsConfig (moto dropped them) and DescribeEndpointConfig returns them.
- DescribeEndpoint (and Search) show each running variant's ManagedInstanceScaling and
  RoutingConfig, from the config the endpoint was created or updated with; UpdateEndpoint's
  PendingDeploymentSummary shows the new config's.
- CreateModel keeps EnableNetworkIsolation (moto always answered false), and DescribeModel leaves
  out a VpcConfig the model was not given (moto answered an empty one).
"""

from __future__ import annotations

import threading
from typing import Any

try:  # moto is the `demo` extra
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.models import FakeEndpoint, SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerModelBackend = None  # type: ignore[assignment,misc]

_LOCK = threading.Lock()
_INSTALLED: list[bool] = []
# What a running variant shows of its config's variant besides the counts and weights moto shows.
RUNNING_VARIANT_FIELDS = ("ManagedInstanceScaling", "RoutingConfig")
CONFIG_FIELDS = {"ExecutionRoleArn": "execution_role_arn", "VpcConfig": "vpc_config",
                 "EnableNetworkIsolation": "enable_network_isolation", "MetricsConfig": "metrics_config"}


def _validate_variants(self: Any, production_variants: list[dict[str, Any]]) -> None:
    """A variant that names a model needs that model; one that names none hosts inference
    components, on instances."""
    for variant in production_variants:
        model = variant.get("ModelName")
        if model:
            if model not in self._models:
                arn = f"arn:aws:sagemaker:{self.region_name}:{self.account_id}:model/{model}"
                raise ValidationError(message=f"Could not find model '{arn}'.")
        elif not variant.get("InstanceType"):
            raise ValidationError(message=(
                f'Variant "{variant.get("VariantName")}" names no model: a variant that hosts inference components '
                "needs an InstanceType and InitialInstanceCount."))


def _with_running_fields(original: Any) -> Any:
    def process(self: Any, production_variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
        processed: list[dict[str, Any]] = original(self, production_variants)
        for running, configured in zip(processed, production_variants, strict=True):
            for key in RUNNING_VARIANT_FIELDS:
                if configured.get(key) is not None:
                    running[key] = configured[key]
        return processed
    return process


def _keeping_config_fields(original: Any) -> Any:
    def create_endpoint_config(self: Any) -> Any:
        answer = original(self)
        config = self.sagemaker_backend.endpoint_configs[self._get_param("EndpointConfigName")]
        for key, attribute in CONFIG_FIELDS.items():
            value = self._get_param(key)
            if value is not None:
                setattr(config, attribute, value)
        return answer
    return create_endpoint_config


def _keeping_model_fields(original: Any) -> Any:
    def create_model(self: Any) -> Any:
        answer = original(self)
        model = self.sagemaker_backend._models[self._get_param("ModelName")]
        model.enable_network_isolation = bool(self._get_param("EnableNetworkIsolation", False))
        if not model.vpc_config:
            model.vpc_config = None  # answered only when given, as SageMaker does
        return answer
    return create_model


def install_hosting() -> None:
    """Make models, configs and endpoints answer as SageMaker's (once per process)."""
    with _LOCK:
        if _INSTALLED:
            return
        SageMakerModelBackend.validate_production_variants = _validate_variants  # type: ignore[method-assign]
        FakeEndpoint._process_production_variants = _with_running_fields(  # type: ignore[method-assign]
            FakeEndpoint._process_production_variants)
        SageMakerResponse.create_endpoint_config = _keeping_config_fields(  # type: ignore[method-assign]
            SageMakerResponse.create_endpoint_config)
        SageMakerResponse.create_model = _keeping_model_fields(  # type: ignore[method-assign]
            SageMakerResponse.create_model)
        _INSTALLED.append(True)
