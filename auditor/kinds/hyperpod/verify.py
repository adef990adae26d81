"""What the next audit run checks after a HyperPod plan is applied (auditor.act.verify runs it):
the cluster the run described has none of the nodes the change deleted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.history.store import AppliedChange
from auditor.kinds.hyperpod.assessment import HyperPodSection
from auditor.write.verify import Evidence, ResourceKey, Verifier, params_of


def nodes_done(change: AppliedChange, evidence: Evidence) -> bool:
    cluster = evidence.found(change, "hyperpod-cluster")
    if cluster is None:
        return False
    deleted = {str(n) for params in params_of(change, "sagemaker", "BatchDeleteClusterNodes")
               for n in params.get("NodeIds") or ()}
    return bool(deleted) and not deleted & {n.instance_id for n in cluster.nodes}


def seen(section: HyperPodSection | None) -> Mapping[str, Mapping[ResourceKey, Any] | None]:
    """The clusters the run saw; None when it did not audit HyperPod."""
    return {"hyperpod-cluster": None if section is None else {
        (a.cluster.account_id, a.cluster.region, a.cluster.name): a.cluster for a in section.clusters}}


VERIFIERS: dict[str, Verifier] = {"hyperpod-cluster": nodes_done}
