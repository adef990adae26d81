"""Inference components for the emulator (moto has none), as SageMaker's API answers them.

- CreateInferenceComponent checks what SageMaker checks before it accepts the request: the name is
  not taken (ValidationException `Cannot create already existing inference component "<arn>".`),
  the endpoint exists (`Could not find endpoint "<arn>".`) and is InService, the variant is one of
  the endpoint's and is component-style (its config names no model), the model exists (`Could not
  find model "<arn>".`), the Specification has ComputeResourceRequirements and the request a
  RuntimeConfig (both may be left out only for an adapter, which names BaseInferenceComponentName).
  It answers the ARN; the component is then Creating, and InService after
  `ComponentBehaviour.seconds` (0 by default: InService at the next read, as moto's endpoints are).
  A component whose copies do not fit beside the others on the variant's instances (its current
  count, or MaxInstanceCount under managed instance scaling; each copy on one instance, by the
  vCPUs, memory and accelerators of the bundled catalog's shape) turns Failed with a FailureReason
  instead. A test keeps one Creating (`hold`) or makes it fail with its own reason (`fail`):
  `Emulator.inference_components(seconds=1, hold={"ic-a"}, fail={"ic-b": "..."})`.
- DescribeInferenceComponent answers in full: Specification (ModelName, ComputeResourceRequirements,
  and whatever else was given), RuntimeConfig (DesiredCopyCount; CurrentCopyCount, 0 until
  InService), EndpointName/Arn, VariantName, status, FailureReason, times. An unknown name is
  `Could not find inference component "<name>".` (the words AWS's SDKs and Terraform match on).
- ListInferenceComponents filters on EndpointNameEquals, VariantNameEquals, StatusEquals,
  NameContains and the creation and modification times, sorts (SortBy Name, CreationTime or Status;
  SortOrder, Descending by default) and pages (MaxResults, NextToken).
- UpdateInferenceComponentRuntimeConfig sets DesiredCopyCount; the component is Updating for
  `seconds`, then InService with CurrentCopyCount = DesiredCopyCount. Only an InService component
  can be updated. DeleteInferenceComponent: Deleting for `seconds`, then gone.
- Tags given at creation are listed by ListTags on the component's ARN (AddTags, DeleteTags too).

The fleet seeder creates components through CreateInferenceComponent, then marks them InService
since the endpoint was created (`settle_seeded`); `add_component` adds one as CreateInferenceComponent
would leave it once InService, without the checks (for tests that set an endpoint's state themselves).
State advances when a component is read (no timer threads). The refusals' words other than the
not-found ones are the emulator's (AWS documents the conditions, not the messages).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

try:  # moto is the `demo` extra
    from moto.core.responses import ActionResult, EmptyResult
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.models import FakeEndpoint, SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerResponse = None  # type: ignore[assignment,misc]

_LOCK = threading.RLock()
_INSTALLED: list[bool] = []
_SORT_KEYS = {"Name": "InferenceComponentName", "CreationTime": "CreationTime", "Status": "InferenceComponentStatus"}
_SUMMARY_KEYS = ("InferenceComponentName", "InferenceComponentArn", "EndpointName", "EndpointArn", "VariantName",
                 "InferenceComponentStatus", "CreationTime", "LastModifiedTime")


@dataclass
class ComponentBehaviour:
    seconds: float = 0.0  # Creating / Updating / Deleting this long
    hold: frozenset[str] = frozenset()  # names kept Creating (or Updating) until released
    fail: Mapping[str, str] = field(default_factory=dict)  # name -> FailureReason: Failed instead of InService


BEHAVIOUR = ComponentBehaviour()


@dataclass
class _Component:
    name: str
    arn: str
    endpoint: str
    endpoint_arn: str
    variant: str
    specification: dict[str, Any]
    desired_copies: int
    current_copies: int
    status: str
    created: datetime
    modified: datetime
    tags: list[dict[str, str]] = field(default_factory=list)
    failure_reason: str | None = None
    due: float | None = None  # when the Creating / Updating / Deleting ends
    doomed: str | None = None  # the FailureReason it turns Failed with when `due` comes

    def describe(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "InferenceComponentName": self.name, "InferenceComponentArn": self.arn,
            "EndpointName": self.endpoint, "EndpointArn": self.endpoint_arn, "VariantName": self.variant,
            "Specification": self.specification,
            "RuntimeConfig": {"DesiredCopyCount": self.desired_copies, "CurrentCopyCount": self.current_copies},
            "CreationTime": self.created, "LastModifiedTime": self.modified,
            "InferenceComponentStatus": self.status,
        }
        if self.failure_reason:
            answer["FailureReason"] = self.failure_reason
        return answer


# (account, region) -> component name -> component
_COMPONENTS: dict[tuple[str, str], dict[str, _Component]] = {}


def utcnow() -> datetime:
    return datetime.now(UTC)


def _aware(when: datetime) -> datetime:
    """Times kept aware (UTC), so that components created by the API and by a seeder sort together."""
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _arn(account_id: str, region: str, name: str) -> str:
    return f"arn:aws:sagemaker:{region}:{account_id}:inference-component/{name}"


def add_component(account_id: str, region: str, endpoint: str, variant: str, name: str, copies: int,
                  cpu_cores: float, accelerators: float, memory_mb: int, created: datetime,
                  model: str | None = None) -> None:
    """A component as CreateInferenceComponent leaves it once InService (for the seeders)."""
    requirements = {"NumberOfCpuCoresRequired": cpu_cores, "NumberOfAcceleratorDevicesRequired": accelerators,
                    "MinMemoryRequiredInMb": memory_mb}
    component = _Component(
        name, _arn(account_id, region, name), endpoint, FakeEndpoint.arn_formatter(endpoint, account_id, region),
        variant, {"ModelName": model or f"{name}-model", "ComputeResourceRequirements": requirements},
        copies, copies, "InService", _aware(created), _aware(created))
    with _LOCK:
        _COMPONENTS.setdefault((account_id, region), {})[name] = component


def settle_seeded(account_id: str, region: str, name: str, created: datetime) -> None:
    """A component a seeder created through the API, InService since `created` (ValueError if it
    could not be placed: the seeder's fleet is wrong)."""
    with _LOCK:
        component = _COMPONENTS[(account_id, region)][name]
        if component.doomed is not None:
            raise ValueError(f"inference component {name}: {component.doomed}")
        component.status, component.current_copies, component.due = "InService", component.desired_copies, None
        component.created = component.modified = _aware(created)


def reset() -> None:
    with _LOCK:
        _COMPONENTS.clear()
        BEHAVIOUR.seconds, BEHAVIOUR.hold, BEHAVIOUR.fail = 0.0, frozenset(), {}


def set_component_behaviour(seconds: float | None = None, hold: Iterable[str] | None = None,
                            fail: Mapping[str, str] | None = None) -> None:
    """How long components stay Creating / Updating / Deleting, which stay Creating (`hold`; an empty
    set releases them), which turn Failed and with what reason (`fail`)."""
    with _LOCK:
        if seconds is not None:
            BEHAVIOUR.seconds = seconds
        if hold is not None:
            BEHAVIOUR.hold = frozenset(hold)
        if fail is not None:
            BEHAVIOUR.fail = dict(fail)


def _settle(store: dict[str, _Component]) -> None:
    clock = time.monotonic()
    for name, component in list(store.items()):
        if component.due is None or clock < component.due or name in BEHAVIOUR.hold:
            continue
        component.due = None
        component.modified = utcnow()
        if component.status == "Deleting":
            del store[name]
        elif component.doomed is not None:
            component.status, component.failure_reason, component.doomed = "Failed", component.doomed, None
            component.current_copies = 0
        else:
            component.status, component.current_copies = "InService", component.desired_copies


def _store(response: Any) -> dict[str, _Component]:
    """This account's and region's components, settled."""
    store = _COMPONENTS.setdefault((response.current_account, response.region), {})
    _settle(store)
    return store


def _found(store: dict[str, _Component], name: str) -> _Component:
    component = store.get(name)
    if component is None:
        raise ValidationError(message=f'Could not find inference component "{name}".')
    return component


# -- CreateInferenceComponent -----------------------------------------------------------------------

def _component_variant(backend: Any, endpoint: Any, variant_name: str) -> dict[str, Any] | None:
    """The config's variant the component goes on (None when the endpoint's config was deleted)."""
    if variant_name not in {v["VariantName"] for v in endpoint.production_variants}:
        raise ValidationError(message=f'The variant name "{variant_name}" is not present within endpoint '
                                      f'"{endpoint.arn}".')
    config = backend.endpoint_configs.get(endpoint.endpoint_config_name)
    if config is None:
        return None
    variant = next((v for v in config.production_variants if v["VariantName"] == variant_name), None)
    if variant is not None and variant.get("ModelName"):
        raise ValidationError(message=(
            f'Inference components cannot be deployed to variant "{variant_name}" of endpoint "{endpoint.arn}": '
            f'it hosts model "{variant["ModelName"]}". Deploy them to an endpoint whose config\'s variant names '
            "no model."))
    return variant


def _capacity(variant: dict[str, Any], endpoint: Any) -> tuple[Any, int] | None:
    """The variant's shape and how many instances it may run (None when the catalog has no shape)."""
    from auditor.catalog import load_catalog

    shape = load_catalog().shape(str(variant.get("InstanceType") or ""))
    if shape is None:
        return None
    managed = variant.get("ManagedInstanceScaling") or {}
    if managed.get("Status") == "ENABLED" and managed.get("MaxInstanceCount"):
        return shape, int(managed["MaxInstanceCount"])
    running: dict[str, Any] = next(
        (v for v in endpoint.production_variants if v["VariantName"] == variant["VariantName"]), {})
    return shape, int(running.get("CurrentInstanceCount") or variant.get("InitialInstanceCount") or 0)


def _needs(specification: dict[str, Any]) -> tuple[float, float, float]:
    required = specification.get("ComputeResourceRequirements") or {}
    return (float(required.get("NumberOfCpuCoresRequired") or 0), float(required.get("MinMemoryRequiredInMb") or 0),
            float(required.get("NumberOfAcceleratorDevicesRequired") or 0))


def _placement_failure(store: dict[str, _Component], endpoint: Any, variant: dict[str, Any], name: str,
                       specification: dict[str, Any], copies: int) -> str | None:
    """Why the copies cannot be placed beside the variant's other components' copies (first fit,
    each copy on one instance), or None when they fit or the shape is unknown."""
    capacity = _capacity(variant, endpoint)
    if capacity is None or copies == 0:
        return None
    shape, instances = capacity
    free = [[float(shape.vcpu), shape.memory_gib * 1024, float(shape.gpu_count)] for _ in range(instances)]
    placed = [(_needs(c.specification), c.desired_copies) for c in store.values()
              if c.endpoint == endpoint.endpoint_name and c.variant == variant["VariantName"]
              and c.status not in ("Failed", "Deleting") and c.doomed is None]
    for index, (needs, count) in enumerate([*placed, (_needs(specification), copies)]):
        for _ in range(count):
            room = next((f for f in free if all(have >= need for have, need in zip(f, needs, strict=True))), None)
            if room is None:
                if index < len(placed):
                    return None  # the others overfill it already: the emulator does not judge this one by them
                cores, memory, devices = needs
                return (f"Insufficient capacity to place {copies} copies of inference component {name} "
                        f"({cores:g} CPU cores, {memory:g} MB, {devices:g} accelerator devices each) on "
                        f"{instances} x {shape.instance_type} of variant {variant['VariantName']}.")
            for i, need in enumerate(needs):
                room[i] -= need
    return None


def _create(self: Any) -> Any:
    backend: Any = self.sagemaker_backend
    name = str(self._get_param("InferenceComponentName") or "")
    endpoint_name = str(self._get_param("EndpointName") or "")
    variant_name = self._get_param("VariantName")
    specification = self._get_param("Specification")
    runtime = self._get_param("RuntimeConfig")
    arn = _arn(self.current_account, self.region, name)
    with _LOCK:
        store = _store(self)
        if name in store:
            raise ValidationError(message=f'Cannot create already existing inference component "{arn}".')
        endpoint = backend.endpoints.get(endpoint_name)
        if endpoint is None:
            endpoint_arn = FakeEndpoint.arn_formatter(endpoint_name, self.current_account, self.region)
            raise ValidationError(message=f'Could not find endpoint "{endpoint_arn}".')
        if endpoint.endpoint_status != "InService":
            raise ValidationError(message=(f'Endpoint "{endpoint.arn}" is {endpoint.endpoint_status}: inference '
                                           "components can be created only on an endpoint that is InService."))
        if self._get_param("Specifications"):
            raise ValidationError(message="The emulator takes one Specification, not Specifications.")
        if not isinstance(specification, dict):
            raise ValidationError(message="Specification is required.")
        adapter = bool(specification.get("BaseInferenceComponentName"))
        if not variant_name and not adapter:
            raise ValidationError(message="VariantName is required.")
        variant = _component_variant(backend, endpoint, str(variant_name)) if variant_name else None
        model = specification.get("ModelName")
        if model and model not in backend._models:
            raise ValidationError(message=f'Could not find model "{_model_arn(self, str(model))}".')
        if not adapter and not model and not specification.get("Container"):
            raise ValidationError(message="Specification needs a ModelName or a Container.")
        if not adapter and not specification.get("ComputeResourceRequirements"):
            raise ValidationError(message="Specification.ComputeResourceRequirements is required.")
        if not adapter and not isinstance(runtime, dict):
            raise ValidationError(message="RuntimeConfig is required.")
        copies = int((runtime or {}).get("CopyCount") or 0)
        doomed = BEHAVIOUR.fail.get(name)
        if doomed is None and variant is not None:
            doomed = _placement_failure(store, endpoint, variant, name, specification, copies)
        now = utcnow()
        store[name] = _Component(name, arn, endpoint_name, endpoint.arn, str(variant_name or ""),
                                 dict(specification), copies, 0, "Creating", now, now,
                                 list(self._get_param("Tags") or []),
                                 due=time.monotonic() + BEHAVIOUR.seconds, doomed=doomed)
    return ActionResult({"InferenceComponentArn": arn})


def _model_arn(response: Any, model: str) -> str:
    return f"arn:aws:sagemaker:{response.region}:{response.current_account}:model/{model}"


# -- the other calls --------------------------------------------------------------------------------

def _describe(self: Any) -> Any:
    with _LOCK:
        return ActionResult(_found(_store(self), str(self._get_param("InferenceComponentName") or "")).describe())


def _epoch(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def _stamp(when: datetime) -> float:
    return _aware(when).timestamp()


def _list(self: Any) -> Any:
    wanted = {key: self._get_param(key) for key in ("EndpointNameEquals", "VariantNameEquals", "StatusEquals",
                                                    "NameContains")}
    bounds = {key: _epoch(self._get_param(key)) for key in ("CreationTimeBefore", "CreationTimeAfter",
                                                            "LastModifiedTimeBefore", "LastModifiedTimeAfter")}

    def keep(c: _Component) -> bool:
        return ((wanted["EndpointNameEquals"] in (None, c.endpoint))
                and (wanted["VariantNameEquals"] in (None, c.variant))
                and (wanted["StatusEquals"] in (None, c.status))
                and (not wanted["NameContains"] or str(wanted["NameContains"]) in c.name)
                and all(bound is None or (_stamp(when) < bound if key.endswith("Before") else _stamp(when) > bound)
                        for key, bound in bounds.items()
                        for when in [c.created if key.startswith("Creation") else c.modified]))

    with _LOCK:
        found = [c.describe() for c in _store(self).values() if keep(c)]
    sort_key = _SORT_KEYS.get(str(self._get_param("SortBy") or "CreationTime"), "CreationTime")
    found.sort(key=lambda c: c[sort_key], reverse=(self._get_param("SortOrder") or "Descending") == "Descending")
    start = int(self._get_param("NextToken") or 0)
    end = start + int(self._get_param("MaxResults") or 10)
    answer: dict[str, Any] = {"InferenceComponents": [{k: c[k] for k in _SUMMARY_KEYS} for c in found[start:end]]}
    if end < len(found):
        answer["NextToken"] = str(end)
    return ActionResult(answer)


def _update_runtime_config(self: Any) -> Any:
    name = str(self._get_param("InferenceComponentName") or "")
    desired = self._get_param("DesiredRuntimeConfig") or {}
    if not isinstance(desired, dict) or desired.get("CopyCount") is None:
        raise ValidationError(message="DesiredRuntimeConfig.CopyCount is required.")
    with _LOCK:
        component = _found(_store(self), name)
        if component.status != "InService":
            raise ValidationError(message=f'Cannot update inference component "{component.arn}" while it is '
                                          f"{component.status}.")
        component.desired_copies = int(desired["CopyCount"])
        component.status, component.modified = "Updating", utcnow()
        component.due = time.monotonic() + BEHAVIOUR.seconds
    return ActionResult({"InferenceComponentArn": component.arn})


def _delete(self: Any) -> Any:
    with _LOCK:
        component = _found(_store(self), str(self._get_param("InferenceComponentName") or ""))
        if component.status != "Deleting":
            component.status, component.modified = "Deleting", utcnow()
            component.due = time.monotonic() + BEHAVIOUR.seconds
    return EmptyResult()


def _components_by_arn(original: Any) -> Any:
    """ListTags, AddTags and DeleteTags on a component's ARN (moto looks resources up by kind)."""
    def lookup(self: Any, arn: str) -> Any:
        if ":inference-component/" in arn:
            account, region = arn.split(":")[4], arn.split(":")[3]
            with _LOCK:
                found = _COMPONENTS.get((account, region), {}).get(arn.rsplit("/", 1)[-1])
            if found is None or found.arn != arn:
                raise ValidationError(message=f'Could not find inference component "{arn}".')
            return found
        return original(self, arn)
    return lookup


def install_inference_components() -> None:
    with _LOCK:
        if _INSTALLED:
            return
        SageMakerResponse.create_inference_component = _create  # type: ignore[attr-defined]
        SageMakerResponse.describe_inference_component = _describe  # type: ignore[attr-defined]
        SageMakerResponse.list_inference_components = _list  # type: ignore[attr-defined]
        SageMakerResponse.update_inference_component_runtime_config = _update_runtime_config  # type: ignore[attr-defined]
        SageMakerResponse.delete_inference_component = _delete  # type: ignore[attr-defined]
        SageMakerModelBackend._get_resource_from_arn = _components_by_arn(  # type: ignore[method-assign]
            SageMakerModelBackend._get_resource_from_arn)
        _INSTALLED.append(True)
