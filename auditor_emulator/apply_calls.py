"""The calls `audit apply` makes beyond endpoints that moto 5.2.5 lacks, as SageMaker answers them,
so that apply runs end to end in the emulator:

- BatchDeleteClusterNodes (HyperPod): the named nodes leave the cluster (ListClusterNodes stops
  listing them) and their group's count drops; a node the cluster does not have is in the answer's
  `Failed` list (NodeIdNotFound), as AWS reports it. The cluster is Updating for
  `UpdateBehaviour.seconds`, then InService again (settled when DescribeCluster is answered).
- ListTags on a cluster's ARN: moto looks resources up by the name at the end of the ARN, but a
  HyperPod ARN ends in the cluster's id (auditor_emulator.hyperpod sets it as AWS does).
- Studio apps (moto has none): CreateApp (to seed one), DescribeApp, DeleteApp (Deleting, then
  Deleted after `UpdateBehaviour.seconds`: AWS keeps describing a deleted app for a while),
  ListApps and ListTags on the app's ARN. The audit's Studio discovery of what the emulator cannot
  hold (spaces, activity timestamps) is tested with botocore's Stubber (tests/test_studio.py).
- Studio domains (moto has CreateDomain, DescribeDomain and ListDomains): UpdateDomain (each key of
  DefaultUserSettings and DefaultSpaceSettings given replaces the domain's; the domain is Updating
  for `UpdateBehaviour.seconds`, then InService, settled when DescribeDomain or ListDomains is
  answered), and the reads the audit's Studio discovery makes of a domain: ListApps (the apps
  CreateApp made in it) and ListSpaces (none: the emulator has no CreateSpace, so a domain here has
  no spaces).

- Application Auto Scaling's scalable dimension of inference components
  (`sagemaker:inference-component:DesiredCopyCount`), which moto's list of dimensions lacks: an
  off-hours plan's RegisterScalableTarget and PutScheduledAction on a component's copies.

StopNotebookInstance and DescribeNotebookInstance, CreateDomain, DescribeDomain, EventBridge
Scheduler, scheduled actions, scaling policies and alarms are moto's own.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

try:  # moto is the `demo` extra
    from moto.core.utils import utcnow
    from moto.sagemaker.exceptions import ResourceInUseException, ResourceNotFound, ValidationError
    from moto.sagemaker.models import SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerModelBackend = None  # type: ignore[assignment,misc]

from auditor_emulator.updates import BEHAVIOUR

_LOCK = threading.RLock()
_INSTALLED: list[bool] = []


@dataclass
class _App:
    arn: str
    domain_id: str
    owner_key: str  # UserProfileName | SpaceName
    owner: str
    app_type: str
    app_name: str
    resource_spec: dict[str, Any]
    tags: list[dict[str, str]] = field(default_factory=list)
    status: str = "InService"
    created: Any = None
    deleted_due: float | None = None

    def describe(self) -> dict[str, Any]:
        answer = {"AppArn": self.arn, "AppType": self.app_type, "AppName": self.app_name, "DomainId": self.domain_id,
                  self.owner_key: self.owner, "Status": self.status, "CreationTime": self.created,
                  "ResourceSpec": self.resource_spec}
        return answer


def _apps(backend: Any) -> dict[tuple[str, str, str, str], _App]:
    if not hasattr(backend, "auditor_apps"):
        backend.auditor_apps = {}
    return backend.auditor_apps


def _app_key(params: dict[str, Any]) -> tuple[str, str, str, str]:
    owner = params.get("SpaceName") or params.get("UserProfileName")
    if not owner or not params.get("DomainId"):
        raise ValidationError(message="DomainId and UserProfileName or SpaceName are required.")
    return str(params["DomainId"]), str(owner), str(params["AppType"]), str(params["AppName"])


def _settle_apps(backend: Any) -> None:
    clock = time.monotonic()
    for app in _apps(backend).values():
        if app.status == "Deleting" and app.deleted_due is not None and clock >= app.deleted_due:
            app.status = "Deleted"


def _app(backend: Any, params: dict[str, Any]) -> _App:
    with _LOCK:
        _settle_apps(backend)
        app = _apps(backend).get(_app_key(params))
        if app is None:
            raise ResourceNotFound(message=f"App {params.get('AppName')} of type {params.get('AppType')} does not "
                                           "exist.")
        return app


def _create_app(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = {k: self._get_param(k) for k in ("DomainId", "UserProfileName", "SpaceName", "AppType", "AppName")}
    backend = self.sagemaker_backend
    key = _app_key(params)
    owner_key = "SpaceName" if params.get("SpaceName") else "UserProfileName"
    arn = (f"arn:aws:sagemaker:{backend.region_name}:{backend.account_id}:app/{key[0]}/{key[1]}/"
           f"{key[2].lower()}/{key[3]}")
    with _LOCK:
        _apps(backend)[key] = _App(arn, key[0], owner_key, key[1], key[2], key[3],
                                   dict(self._get_param("ResourceSpec") or {}), list(self._get_param("Tags") or []),
                                   created=utcnow())
    return ActionResult({"AppArn": arn})


def _describe_app(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = {k: self._get_param(k) for k in ("DomainId", "UserProfileName", "SpaceName", "AppType", "AppName")}
    return ActionResult(_app(self.sagemaker_backend, params).describe())


def _delete_app(self: Any) -> Any:
    from moto.core.responses import EmptyResult

    params = {k: self._get_param(k) for k in ("DomainId", "UserProfileName", "SpaceName", "AppType", "AppName")}
    with _LOCK:
        app = _app(self.sagemaker_backend, params)
        if app.status != "InService":
            raise ValidationError(message=f"App {app.app_name} is {app.status}: it cannot be deleted.")
        app.status = "Deleting"
        app.deleted_due = time.monotonic() + BEHAVIOUR.seconds
    return EmptyResult()


def _list_apps(self: Any) -> Any:
    from moto.core.responses import ActionResult

    domain = self._get_param("DomainIdEquals")
    with _LOCK:
        _settle_apps(self.sagemaker_backend)
        listed = [{k: v for k, v in app.describe().items() if k != "AppArn"}
                  for app in _apps(self.sagemaker_backend).values() if domain in (None, app.domain_id)]
    return ActionResult({"Apps": listed})


def _list_spaces(self: Any) -> Any:
    from moto.core.responses import ActionResult

    return ActionResult({"Spaces": []})


# -- Studio domains -------------------------------------------------------------------------------

_DOMAIN_UPDATING: dict[int, float] = {}


def _settle_domains(backend: Any) -> None:
    clock = time.monotonic()
    for domain in backend.domains.values():
        due = _DOMAIN_UPDATING.get(id(domain))
        if due is not None and clock >= due:
            domain.status = "InService"
            del _DOMAIN_UPDATING[id(domain)]


def _update_domain(self: Any) -> Any:
    from moto.core.responses import ActionResult

    backend = self.sagemaker_backend
    domain_id = str(self._get_param("DomainId") or "")
    with _LOCK:
        _settle_domains(backend)
        domain = backend.domains.get(domain_id)
        if domain is None:
            raise ResourceNotFound(message=f"Domain {domain_id} does not exist.")
        if domain.status != "InService":
            raise ResourceInUseException(message=f"Domain {domain_id} is {domain.status}: it cannot be updated now.")
        for attribute, param in (("default_user_settings", "DefaultUserSettings"),
                                 ("default_space_settings", "DefaultSpaceSettings")):
            given = self._get_param(param)
            if isinstance(given, dict):
                setattr(domain, attribute, {**(getattr(domain, attribute) or {}), **given})
        domain.status = "Updating"
        domain.last_modified_time = utcnow()
        _DOMAIN_UPDATING[id(domain)] = time.monotonic() + BEHAVIOUR.seconds
    return ActionResult({"DomainArn": domain.arn})


def _settling_domains(original: Any) -> Any:
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            _settle_domains(self)
        return original(self, *args, **kwargs)
    return wrapped


# -- HyperPod -----------------------------------------------------------------------------------

_UPDATING: dict[int, float] = {}


def _settle_clusters(backend: Any) -> None:
    clock = time.monotonic()
    for cluster in backend.clusters.values():
        due = _UPDATING.get(id(cluster))
        if due is not None and clock >= due:
            cluster.status = "InService"
            del _UPDATING[id(cluster)]


def _batch_delete_cluster_nodes(self: Any) -> Any:
    from moto.core.responses import ActionResult

    backend = self.sagemaker_backend
    name = str(self._get_param("ClusterName") or "")
    with _LOCK:
        _settle_clusters(backend)
        cluster = backend.clusters.get(name) or next(
            (c for c in backend.clusters.values() if c.arn == name), None)
        if cluster is None:
            raise ValidationError(message=f"Could not find cluster '{name}'.")
        if cluster.status != "InService":
            raise ValidationError(message=f"Cluster {name} is {cluster.status}: nodes cannot be deleted now.")
        by_id = {node.instance_id: key for key, node in cluster.nodes.items()}
        deleted, failed = [], []
        for node_id in self._get_param("NodeIds") or []:
            key = by_id.pop(node_id, None)
            if key is None:
                failed.append({"Code": "NodeIdNotFound", "Message": f"Node {node_id} is not in cluster {name}.",
                               "NodeId": node_id})
                continue
            node = cluster.nodes.pop(key)
            for group in cluster.instance_groups:
                if group.get("InstanceGroupName") == node.instance_group_name:
                    for count in ("InstanceCount", "CurrentCount", "TargetCount"):
                        if isinstance(group.get(count), int):
                            group[count] = max(group[count] - 1, 0)
            deleted.append(node_id)
        if deleted:
            cluster.status = "Updating"
            _UPDATING[id(cluster)] = time.monotonic() + BEHAVIOUR.seconds
    return ActionResult({"Failed": failed, "Successful": deleted})


def _settling_clusters(original: Any) -> Any:
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            _settle_clusters(self)
        return original(self, *args, **kwargs)
    return wrapped


def _resource_by_arn(original: Any) -> Any:
    """Clusters by their ARN (it ends in the cluster's id, not its name), Studio apps, and domains
    created without tags."""
    def lookup(self: Any, arn: str) -> Any:
        if ":cluster/" in arn:
            found = next((c for c in self.clusters.values() if c.arn == arn), None)
            if found is not None:
                return found
        if ":app/" in arn:
            app = next((a for a in _apps(self).values() if a.arn == arn), None)
            if app is None:
                raise ValidationError(message=f"Could not find app {arn}")
            return app
        found = original(self, arn)
        if ":domain/" in arn and found is not None and found.tags is None:
            found.tags = []  # moto keeps None for a domain created without tags; AWS lists none
        return found
    return lookup


COPY_DIMENSION = ("SAGEMAKER_INFERENCE_COMPONENT_DESIRED_COPY_COUNT", "sagemaker:inference-component:DesiredCopyCount")


def _with_copy_dimension() -> None:
    """moto validates dimensions against its enum, read by name from both modules: both get one that
    has the inference components' dimension too."""
    from enum import Enum

    from moto.applicationautoscaling import models, responses

    current = models.ScalableDimensionValueSet
    if COPY_DIMENSION[1] in {d.value for d in current}:
        return
    extended = Enum("ScalableDimensionValueSet",  # type: ignore[misc]
                    {**{d.name: d.value for d in current}, COPY_DIMENSION[0]: COPY_DIMENSION[1]})
    models.ScalableDimensionValueSet = extended  # type: ignore[misc,assignment]
    responses.ScalableDimensionValueSet = extended  # type: ignore[misc,assignment]


def install_apply_calls() -> None:
    """Add these calls to the emulator (once per process)."""
    with _LOCK:
        if _INSTALLED:
            return
        _with_copy_dimension()
        SageMakerResponse.create_app = _create_app  # type: ignore[attr-defined]
        SageMakerResponse.describe_app = _describe_app  # type: ignore[attr-defined]
        SageMakerResponse.delete_app = _delete_app  # type: ignore[attr-defined]
        SageMakerResponse.list_apps = _list_apps  # type: ignore[attr-defined]
        SageMakerResponse.list_spaces = _list_spaces  # type: ignore[attr-defined]
        SageMakerResponse.update_domain = _update_domain  # type: ignore[attr-defined]
        SageMakerResponse.batch_delete_cluster_nodes = _batch_delete_cluster_nodes  # type: ignore[attr-defined]
        for read in ("describe_domain", "list_domains"):
            setattr(SageMakerModelBackend, read, _settling_domains(getattr(SageMakerModelBackend, read)))
        SageMakerModelBackend.describe_cluster = _settling_clusters(  # type: ignore[method-assign]
            SageMakerModelBackend.describe_cluster)
        SageMakerModelBackend._get_resource_from_arn = _resource_by_arn(  # type: ignore[method-assign]
            SageMakerModelBackend._get_resource_from_arn)
        _INSTALLED.append(True)
