"""ListInferenceComponents and DescribeInferenceComponent for the emulator (moto has neither), so
that the demo fleet can hold an endpoint that hosts inference components.

Components are added in-process by the fleet seeder (`add_component`, as CreateInferenceComponent
would leave them once InService) and answered in the shape of SageMaker's API reference: the
summaries (name, ARN, endpoint, variant, status, times) and the description (Specification with
ComputeResourceRequirements, RuntimeConfig with the copy counts).
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

try:  # moto is the `demo` extra
    from moto.core.responses import ActionResult
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.responses import SageMakerResponse
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerResponse = None  # type: ignore[assignment,misc]

# (account, region) -> component name -> its description
_COMPONENTS: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
_LOCK = threading.Lock()
_INSTALLED: list[bool] = []


def add_component(account_id: str, region: str, endpoint: str, variant: str, name: str, copies: int,
                  cpu_cores: float, accelerators: float, memory_mb: int, created: datetime) -> None:
    endpoint_arn = f"arn:aws:sagemaker:{region}:{account_id}:endpoint/{endpoint}"
    description = {
        "InferenceComponentName": name,
        "InferenceComponentArn": f"arn:aws:sagemaker:{region}:{account_id}:inference-component/{name}",
        "EndpointName": endpoint, "EndpointArn": endpoint_arn, "VariantName": variant,
        "InferenceComponentStatus": "InService", "CreationTime": created, "LastModifiedTime": created,
        "Specification": {"ModelName": f"{name}-model", "ComputeResourceRequirements": {
            "NumberOfCpuCoresRequired": cpu_cores, "NumberOfAcceleratorDevicesRequired": accelerators,
            "MinMemoryRequiredInMb": memory_mb}},
        "RuntimeConfig": {"DesiredCopyCount": copies, "CurrentCopyCount": copies},
    }
    with _LOCK:
        _COMPONENTS.setdefault((account_id, region), {})[name] = description


def reset() -> None:
    with _LOCK:
        _COMPONENTS.clear()


def _list(self: Any) -> Any:
    endpoint = self._get_param("EndpointNameEquals")
    with _LOCK:
        found = [c for c in _COMPONENTS.get((self.current_account, self.region), {}).values()
                 if endpoint is None or c["EndpointName"] == endpoint]
    keys = ("InferenceComponentName", "InferenceComponentArn", "EndpointName", "EndpointArn", "VariantName",
            "InferenceComponentStatus", "CreationTime", "LastModifiedTime")
    return ActionResult({"InferenceComponents": [{k: c[k] for k in keys} for c in found]})


def _describe(self: Any) -> Any:
    name = self._get_param("InferenceComponentName")
    with _LOCK:
        found = _COMPONENTS.get((self.current_account, self.region), {}).get(name)
    if found is None:
        raise ValidationError(message=f"Could not find inference component '{name}'.")
    return ActionResult(found)


def install_inference_components() -> None:
    with _LOCK:
        if _INSTALLED:
            return
        SageMakerResponse.list_inference_components = _list  # type: ignore[attr-defined]
        SageMakerResponse.describe_inference_component = _describe  # type: ignore[attr-defined]
        _INSTALLED.append(True)
