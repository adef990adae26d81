"""The calls `audit apply` makes beyond endpoints that moto 5.2.5 lacks, as SageMaker answers them,
so that apply runs end to end in the emulator:

- BatchDeleteClusterNodes (HyperPod): the named nodes leave the cluster (ListClusterNodes stops
  listing them) and their group's count drops; a node the cluster does not have is in the answer's
  `Failed` list (NodeIdNotFound), as AWS reports it. The cluster is Updating for
  `UpdateBehaviour.seconds`, then InService again (settled when DescribeCluster is answered).
- ListTags on a cluster's ARN: moto looks resources up by the name at the end of the ARN, but a
  HyperPod ARN ends in the cluster's id (auditor.emulator.hyperpod sets it as AWS does).
- Studio apps (moto has none): CreateApp (to seed one), DescribeApp, DeleteApp (Deleting, then
  Deleted after `UpdateBehaviour.seconds`: AWS keeps describing a deleted app for a while) and
  ListTags on the app's ARN. ListApps stays unimplemented: the audit's Studio discovery is tested
  with botocore's Stubber (tests/test_studio.py).

- Application Auto Scaling's scalable dimension of inference components
  (`sagemaker:inference-component:DesiredCopyCount`), which moto's list of dimensions lacks: an
  off-hours plan's RegisterScalableTarget and PutScheduledAction on a component's copies.

StopNotebookInstance and DescribeNotebookInstance, EventBridge Scheduler, scheduled actions,
scaling policies and alarms are moto's own.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

try:  # moto is the `demo` extra
    from moto.core.utils import utcnow
    from moto.sagemaker.exceptions import ResourceNotFound, ValidationError
    from moto.sagemaker.models import SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse
except ImportError:  # pragma: no cover - exercised only without the extra
    SageMakerModelBackend = None  # type: ignore[assignment,misc]

from auditor.emulator.updates import BEHAVIOUR

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
    """Clusters by their ARN (it ends in the cluster's id, not its name) and Studio apps."""
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
        return original(self, arn)
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
        SageMakerResponse.batch_delete_cluster_nodes = _batch_delete_cluster_nodes  # type: ignore[attr-defined]
        SageMakerModelBackend.describe_cluster = _settling_clusters(  # type: ignore[method-assign]
            SageMakerModelBackend.describe_cluster)
        SageMakerModelBackend._get_resource_from_arn = _resource_by_arn(  # type: ignore[method-assign]
            SageMakerModelBackend._get_resource_from_arn)
        _INSTALLED.append(True)
