"""What apply does per resource type, as one small strategy each (not a chain of ifs): how to read
the resource now (its state, its ARN for ListTags), what "unchanged since the audit" means for it,
and what to wait for once the calls are made.

- endpoint: DescribeEndpoint; unchanged = the audited config, InService; waits for a deployment
  (UpdateEndpoint) to end InService on the new config (or rolled back), for a deleted endpoint to
  be gone, and for nothing else (settings around it).
- notebook-instance: DescribeNotebookInstance; unchanged = InService on the audited instance type;
  waits for Stopped.
- studio-app: DescribeApp (the DeleteApp call's keys); unchanged = InService; waits for Deleted.
- hyperpod-cluster: DescribeCluster and ListClusterNodes; unchanged = InService with every named
  node still there; the answer's Failed list must be empty; waits for InService.
- studio-domain: DescribeDomain (the UpdateDomain call's DomainId); unchanged = InService, idle
  shutdown still off for each app type the plan sets, and those app settings still the ones the plan
  copied (apart from the idle switch and timeout it sets): otherwise the update would overwrite a
  change made since; waits for InService with idle shutdown on for those app types.

Schedules, scheduled actions, alarms and scaling policies a change creates are read back after it
(auditor.act.readback), whatever the resource.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import botocore.exceptions

from auditor.act.binding import named_components, observed_refusal
from auditor.act.plan import ApplyFailed, ApplyRefused, PlanToApply
from auditor.collect.session import THROTTLING_CODES, AwsClients, describe_client_error
from auditor.kinds.endpoints.change import SCALABLE_DIMENSION
from auditor.kinds.workspaces.discover_studio import IDLE_SETTING_APPS, idle_minutes
from auditor.text import one_line

FIRST_POLL_SECONDS = 0.5
MAX_POLL_SECONDS = 30.0  # SageMaker's own waiters poll every 30 s
_ERRORS = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
# What AWS answers for a resource that is not there (DescribeEndpoint says ValidationException).
_NOT_FOUND = ("ResourceNotFound", "ValidationException")


@dataclass(frozen=True)
class Observed:
    """A resource as apply reads it now: its ARN (for ListTags), its status, and the answer; for an
    endpoint also its variants' scalable targets and policies and the inference components it hosts."""

    arn: str
    status: str
    described: dict[str, Any]
    scaling: dict[str, tuple[int, int, tuple[str, ...]]] | None = None  # variant -> (min, max, policies)
    components: set[str] | None = None  # None: not read (no call names one)
    # The endpoint config the audit saw, as DescribeEndpointConfig answers now (an endpoint plan that
    # makes a config: its copy is held to it); None: not read.
    config: dict[str, Any] | None = None


@dataclass(frozen=True)
class Waiting:
    """What a poll for the end of a change needs: how to read the status, which statuses mean
    "still going", which one means done."""

    operation: str
    read: Callable[[], dict[str, Any] | None]  # None: the resource is gone
    status_key: str
    done: str | None  # None: only the resource's being gone is done (gone_is_done)
    in_progress: frozenset[str]
    gone_is_done: bool = False
    at_deadline: str = "the next audit run checks it"  # said when the wait runs out


class Target(ABC):
    """One resource type's strategy (subclasses below; TARGETS maps a plan's resource_type to one)."""

    noun = "resource"

    def plan_problem(self, plan: PlanToApply) -> str | None:
        """What the plan lacks for this type (read from the plan alone), or None."""
        return None

    @abstractmethod
    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        """The resource now (its type's Describe call); ApplyRefused when it cannot be read."""

    @abstractmethod
    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        """Why the resource is not as the audit saw it (one line), or None."""

    def doing(self, clients: AwsClients, plan: PlanToApply) -> str:
        """What the resource is doing now, one clause (said when an apply stops before its end)."""
        try:
            observed = self.observe(clients, plan)
        except ApplyRefused as exc:
            return f"its state could not be read ({exc})"
        return f"{plan_noun(plan)} is {one_line(observed.status)}"

    @abstractmethod
    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        """After the calls: (outcome, message), outcome applied | rolled-back | failed | timed-out."""


def _read(plan: PlanToApply, operation: str, call: Callable[[], Any]) -> dict[str, Any]:
    try:
        return dict(call())
    except _ERRORS as exc:
        raise ApplyRefused(f"{plan_noun(plan)}: "
                           f"{describe_client_error(exc, 'sagemaker', operation, plan.resource.region)}") from None


def _gone(exc: Exception) -> bool:
    if not isinstance(exc, botocore.exceptions.ClientError):
        return False
    error = exc.response.get("Error", {})
    return str(error.get("Code", "")).startswith(_NOT_FOUND[0]) or (
        error.get("Code") == _NOT_FOUND[1] and "Could not find" in str(error.get("Message", "")))


def plan_noun(plan: PlanToApply) -> str:
    target = TARGETS.get(plan.resource.type)
    return f"{target.noun if target else one_line(plan.resource.type)} {one_line(plan.resource.name)}"


def transient(exc: Exception) -> bool:
    """An answer that says nothing about the resource: throttling, a 5xx, a connection that failed
    or a read that timed out (botocore retried it already). A wait keeps polling through it."""
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        return str(error.get("Code", "")) in THROTTLING_CODES or status == 429 or status >= 500
    return isinstance(exc, botocore.exceptions.HTTPClientError)


def poll(plan: PlanToApply, waiting: Waiting, wait_minutes: float, sleep: Callable[[float], None],
         clock: Callable[[], float], wait_source: str = "[apply] wait_minutes"
         ) -> tuple[str, str, dict[str, Any] | None]:
    """Read the status (0.5 s, doubling to 30 s) until it leaves `in_progress` or the deadline:
    (outcome, message, last answer). `wait_source`: where `wait_minutes` came from, as said when it
    runs out. A read that fails transiently (throttled, 5xx, no connection) is no outcome: the wait
    goes on to the deadline, and the message names each outage in one clause."""
    who = plan_noun(plan)
    deadline = clock() + wait_minutes * 60
    delay = FIRST_POLL_SECONDS
    outages: list[str] = []
    outage: tuple[float, str] | None = None  # since when, and the first problem

    def said(message: str) -> str:
        if outage is not None:
            outages.append(f"{waiting.operation} did not answer for {clock() - outage[0]:.0f} s ({outage[1]})")
        return message + "".join(f"; {line}; kept waiting" for line in outages)

    def wait_or_time_out(at_deadline: str, last: dict[str, Any] | None
                         ) -> tuple[str, str, dict[str, Any] | None] | None:
        """Sleep the next back-off step, or the outcome when the deadline has passed."""
        nonlocal delay
        left = deadline - clock()
        if left <= 0:
            return "timed-out", said(at_deadline), last
        sleep(min(delay, left))
        delay = min(delay * 2, MAX_POLL_SECONDS)
        return None

    while True:
        answer: dict[str, Any] | None
        try:
            answer = waiting.read()
        except _ERRORS as exc:
            if waiting.gone_is_done and _gone(exc):
                answer = None
            elif transient(exc):
                if outage is None:
                    outage = (clock(), describe_client_error(exc, "sagemaker", waiting.operation, plan.resource.region))
                ended = wait_or_time_out(f"plan {plan.id}: {who} could not be read at the end of the "
                                         f"{wait_minutes:g} minutes ({wait_source}); {waiting.at_deadline}", None)
                if ended:
                    return ended
                continue
            else:
                raise ApplyFailed(said(f"plan {plan.id}: the calls were made, but "
                                       + describe_client_error(exc, "sagemaker", waiting.operation,
                                                               plan.resource.region))) from None
        if outage is not None:
            outages.append(f"{waiting.operation} did not answer for {clock() - outage[0]:.0f} s ({outage[1]})")
            outage = None
        if answer is None:
            return "applied", said(f"plan {plan.id} applied: {who} is gone"), None
        status = str(answer.get(waiting.status_key) or "")
        if waiting.done is not None and status == waiting.done:
            return "applied", said(f"plan {plan.id} applied: {who} is {waiting.done}"), answer
        if status not in waiting.in_progress:
            reason = one_line(str(answer.get("FailureReason") or answer.get("FailureMessage") or "no reason given"))
            return "failed", said(f"plan {plan.id} failed: {who} is {one_line(status)}: {reason}"), answer
        ended = wait_or_time_out(f"plan {plan.id}: {who} is still {one_line(status)} after {wait_minutes:g} "
                                 f"minutes ({wait_source}); {waiting.at_deadline}", answer)
        if ended:
            return ended


def deployment_wait(plan: PlanToApply, wait_minutes: float) -> tuple[float, str]:
    """How long to wait for the plan's UpdateEndpoint, and why: at least as long as the blue/green
    deployment it starts may take (its MaximumExecutionTimeoutInSeconds plus TerminationWaitInSeconds,
    as the call says), so that a deployment still going normally is not reported as timed out;
    `wait_minutes` when that is longer or the call sets no deployment (SageMaker's default update)."""
    calls = plan.calls_of("sagemaker", "UpdateEndpoint")
    policy = ((calls[0].params.get("DeploymentConfig") or {}).get("BlueGreenUpdatePolicy") or {}) if calls else {}
    limit, termination = policy.get("MaximumExecutionTimeoutInSeconds"), policy.get("TerminationWaitInSeconds")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return wait_minutes, "[apply] wait_minutes"
    termination = termination if isinstance(termination, int) and not isinstance(termination, bool) else 0
    deployment = (limit + termination) / 60
    if deployment <= wait_minutes:
        return wait_minutes, "[apply] wait_minutes"
    return deployment, (f"the deployment's MaximumExecutionTimeoutInSeconds {limit} + TerminationWaitInSeconds "
                        f"{termination}")


def _listed(plan: PlanToApply, operation: str, call: Callable[[], Any]) -> Any:
    service = "sagemaker" if operation == "ListInferenceComponents" else "application-autoscaling"
    try:
        return call()
    except _ERRORS as exc:
        raise ApplyRefused(f"{plan_noun(plan)}: {describe_client_error(exc, service, operation, plan.resource.region)}"
                           ) from None


def _scaling(clients: AwsClients, plan: PlanToApply,
             variants: list[str]) -> dict[str, tuple[int, int, tuple[str, ...]]]:
    """Each variant's scalable target now: (min, max, its policies as "name (type)", sorted)."""
    if not variants:
        return {}
    api = clients.client("application-autoscaling", plan.resource.region)
    ids = {f"endpoint/{plan.resource.name}/variant/{v}": v for v in variants}
    targets = _listed(plan, "DescribeScalableTargets", lambda: [
        t for page in api.get_paginator("describe_scalable_targets").paginate(
            ServiceNamespace="sagemaker", ResourceIds=sorted(ids), ScalableDimension=SCALABLE_DIMENSION)
        for t in page.get("ScalableTargets", [])])
    found: dict[str, tuple[int, int, tuple[str, ...]]] = {}
    for target in targets:
        resource = str(target.get("ResourceId"))
        if resource not in ids:
            continue
        pages = api.get_paginator("describe_scaling_policies").paginate(
            ServiceNamespace="sagemaker", ResourceId=resource, ScalableDimension=SCALABLE_DIMENSION)
        policies: list[str] = _listed(plan, "DescribeScalingPolicies", partial(_policy_names, pages))
        found[ids[resource]] = (int(target.get("MinCapacity", 0)), int(target.get("MaxCapacity", 0)), tuple(policies))
    return found


def _policy_names(pages: Any) -> list[str]:
    return sorted(f"{p.get('PolicyName')} ({p.get('PolicyType', 'unknown')})"
                  for page in pages for p in page.get("ScalingPolicies", []))


def _number(value: Any) -> float | None:
    return None if value is None or isinstance(value, bool) or not isinstance(value, int | float) else float(value)


def basis_drift(basis: dict[str, Any], observed: Observed) -> str | None:
    """What differs between the endpoint as the plan was computed from it (its `basis`) and the
    endpoint now, as one phrase; None when nothing does. Compared per variant: that it is there,
    its instance count (Current and Desired; for a variant under autoscaling or managed instance
    scaling, whose count moves by design, the scalable target's or the managed scaling's min and
    max instead), its weight (Current and Desired), its serverless memory and concurrency, its
    managed instance scaling, its scalable target and policies (names and types). The instance
    type is held by the config name (DescribeEndpoint does not say it; only a new config changes it)."""
    live = {str(v.get("VariantName")): v for key in ("ProductionVariants", "ShadowProductionVariants")
            for v in observed.described.get(key) or []}
    audited = [v for v in basis.get("variants") or [] if isinstance(v, dict)]
    names = {str(v.get("name")) for v in audited}
    if names != set(live):
        return (f"its variants are now {', '.join(sorted(one_line(n) for n in live)) or 'none'} "
                f"(the plan was made on {', '.join(sorted(one_line(n) for n in names)) or 'none'})")
    scaling = observed.scaling or {}
    for variant in audited:
        name = str(variant.get("name"))
        now = live[name]
        who = f"variant {one_line(name)}"
        target = variant.get("autoscaling") if isinstance(variant.get("autoscaling"), dict) else None
        managed = variant.get("managed_instance_scaling") if isinstance(variant.get("managed_instance_scaling"),
                                                                        dict) else None
        serverless = variant.get("serverless") if isinstance(variant.get("serverless"), dict) else None
        found = scaling.get(name)
        if target is None and found is not None and basis.get("autoscaling_read") is not False:
            return f"{who} is under autoscaling now ({found[0]}-{found[1]} instances)"
        if target is not None:
            planned = (target.get("min_capacity"), target.get("max_capacity"),
                       tuple(sorted(str(p) for p in target.get("policies") or [])))
            if found is None:
                return f"{who} is no longer under autoscaling (it was {planned[0]}-{planned[1]} instances)"
            if found[:2] != planned[:2]:
                return (f"{who}'s scalable target is now {found[0]}-{found[1]} instances "
                        f"(the plan was made on {planned[0]}-{planned[1]})")
            if found[2] != planned[2]:
                return (f"{who}'s scaling policies are now {', '.join(one_line(p) for p in found[2]) or 'none'} "
                        f"(the plan was made on {', '.join(one_line(p) for p in planned[2]) or 'none'})")
        live_managed = now.get("ManagedInstanceScaling") or {}
        live_managed = (live_managed.get("MinInstanceCount"), live_managed.get("MaxInstanceCount")) \
            if live_managed.get("Status") == "ENABLED" else None
        planned_managed = (managed.get("min_instances"), managed.get("max_instances")) if managed else None
        if "ManagedInstanceScaling" in now and live_managed != planned_managed:
            return (f"{who}'s managed instance scaling is now {_managed_text(live_managed)} "
                    f"(the plan was made on {_managed_text(planned_managed)})")
        if serverless is not None:
            config = now.get("DesiredServerlessConfig") or now.get("CurrentServerlessConfig") or {}
            shown = (config.get("MemorySizeInMB"), config.get("MaxConcurrency"))
            planned_serverless = (serverless.get("memory_size_mb"), serverless.get("max_concurrency"))
            if shown != planned_serverless:
                return (f"{who}'s serverless settings are now {shown[0]} MB, concurrency {shown[1]} (the plan was made "
                        f"on {planned_serverless[0]} MB, concurrency {planned_serverless[1]})")
        elif target is None and managed is None:
            for key in ("DesiredInstanceCount", "CurrentInstanceCount"):
                count = _number(now.get(key))
                if count is not None and count != _number(variant.get("instance_count")):
                    words = "desired" if key.startswith("Desired") else "current"
                    return (f"{who}'s {words} instance count is now {count:g} "
                            f"(the plan was made on {variant.get('instance_count')})")
        weight = _number(variant.get("weight"))
        for key in ("DesiredWeight", "CurrentWeight"):
            value = _number(now.get(key))
            if value is not None and weight is not None and abs(value - weight) > 1e-9:
                return f"{who}'s weight is now {value:g} (the plan was made on {weight:g})"
    return None


def _managed_text(scaling: tuple[Any, Any] | None) -> str:
    return "off" if scaling is None else f"{scaling[0]}-{scaling[1]} instances"


class EndpointTarget(Target):
    """An endpoint: a deployment (UpdateEndpoint), a delete, or settings around it (schedules,
    scheduled actions, alarms, scaling policies) that leave it as it is."""

    noun = "endpoint"
    in_progress = frozenset({"Updating", "SystemUpdating", "RollingBack", "Creating"})

    def plan_problem(self, plan: PlanToApply) -> str | None:
        if plan.calls_of("sagemaker", "UpdateEndpoint") and plan.target_config is None:
            return "its UpdateEndpoint names no new endpoint config"
        if plan.audited_config is None:
            return ("it does not record the endpoint config it was audited on (current.endpoint_config_name): "
                    "run the audit again")
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        """DescribeEndpoint; the scalable targets and scaling policies of its variants
        (DescribeScalableTargets, DescribeScalingPolicies); the inference components it hosts
        (ListInferenceComponents) when a call names one."""
        api = clients.client("sagemaker", plan.resource.region)
        described = _read(plan, "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name))
        variants = [str(v.get("VariantName")) for key in ("ProductionVariants", "ShadowProductionVariants")
                    for v in described.get(key) or []]
        scaling = _scaling(clients, plan, variants)
        components = None
        if named_components(plan):
            components = _listed(plan, "ListInferenceComponents", lambda: {
                str(c.get("InferenceComponentName"))
                for page in api.get_paginator("list_inference_components").paginate(
                    EndpointNameEquals=plan.resource.name)
                for c in page.get("InferenceComponents", [])})
        config = None
        if plan.calls_of("sagemaker", "CreateEndpointConfig") and plan.audited_config \
                and described.get("EndpointConfigName") == plan.audited_config:  # otherwise `changed` refuses
            audited = plan.audited_config
            config = _read(plan, "DescribeEndpointConfig", lambda: api.describe_endpoint_config(
                EndpointConfigName=audited))
        return Observed(str(described.get("EndpointArn") or ""), str(described.get("EndpointStatus") or ""),
                        described, scaling, components, config)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        now = str(observed.described.get("EndpointConfigName") or "")
        if now != plan.audited_config:
            return (f"endpoint {name} changed since the audit: its config is now {one_line(now)!r}, the plan was "
                    f"made on {one_line(plan.audited_config or '')!r}; run the audit again")
        if observed.status != "InService":
            return f"endpoint {name} is {one_line(observed.status)}, not InService: nothing is changed while it is"
        if plan.basis is None:
            return (f"endpoint {name}: the plan does not record what it was computed from (a history written before "
                    "plans carried their basis); run the audit again")
        drift = basis_drift(plan.basis, observed)
        if drift:
            return f"endpoint {name} changed since the audit: {drift}; run the audit again"
        variants = {str(v.get("VariantName")) for key in ("ProductionVariants", "ShadowProductionVariants")
                    for v in observed.described.get(key) or []}
        return observed_refusal(plan, variants, observed.components, observed.config)

    def doing(self, clients: AwsClients, plan: PlanToApply) -> str:
        try:
            observed = self.observe(clients, plan)
        except ApplyRefused as exc:
            return f"its state could not be read ({exc})"
        name, status = one_line(plan.resource.name), one_line(observed.status)
        pending = str((observed.described.get("PendingDeploymentSummary") or {}).get("EndpointConfigName") or "")
        if observed.status in self.in_progress and pending:
            return f"endpoint {name} is {status} to config {one_line(pending)}; the deployment goes on"
        config = one_line(str(observed.described.get("EndpointConfigName") or ""))
        return f"endpoint {name} is {status}" + (f" on config {config}" if config else "")

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        name = one_line(plan.resource.name)
        if plan.calls_of("sagemaker", "DeleteEndpoint"):
            outcome, message, _ = poll(plan, Waiting(
                "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name), "EndpointStatus",
                done=None, in_progress=frozenset({"Deleting", "InService"}), gone_is_done=True), wait_minutes,
                sleep, clock)
            return outcome, message
        if not plan.calls_of("sagemaker", "UpdateEndpoint"):
            return "applied", f"plan {plan.id} applied: endpoint {name} stays on {one_line(plan.audited_config or '')}"
        target, old = plan.target_config, plan.audited_config
        minutes, source = deployment_wait(plan, wait_minutes)
        outcome, message, described = poll(plan, Waiting(
            "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name), "EndpointStatus",
            done="InService", in_progress=self.in_progress,
            at_deadline="the deployment goes on and the next audit run checks its shape"), minutes, sleep, clock,
            source)
        if outcome != "applied" or described is None:
            return outcome, message
        config = str(described.get("EndpointConfigName") or "")
        outages = message[len(f"plan {plan.id} applied: endpoint {name} is InService"):]  # poll's "; ..." clauses
        if config == target:
            return "applied", (f"plan {plan.id} applied: endpoint {name} is InService on {one_line(config)} "
                               f"(was {old}){outages}")
        reason = one_line(str(described.get("FailureReason") or "no reason given"))
        return "rolled-back", (f"plan {plan.id} rolled back: endpoint {name} is InService on {one_line(config)}, "
                               f"not {target}: {reason}{outages}")


class NotebookTarget(Target):
    """A notebook instance stopped (StopNotebookInstance): its volume and files are kept."""

    noun = "notebook instance"

    @staticmethod
    def audited_type(plan: PlanToApply) -> str | None:
        """The instance type the audit saw: a stop keeps it, so the proposed option names it too
        (a notebook has no variant, so `current` may not)."""
        kind = plan.current.get("instance_type") or plan.proposed.get("instance_type")
        return kind if isinstance(kind, str) and kind else None

    def plan_problem(self, plan: PlanToApply) -> str | None:
        if self.audited_type(plan) is None:
            return "it does not record the instance type it was audited on (current or proposed instance_type)"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        described = _read(plan, "DescribeNotebookInstance",
                          lambda: api.describe_notebook_instance(NotebookInstanceName=plan.resource.name))
        return Observed(str(described.get("NotebookInstanceArn") or ""),
                        str(described.get("NotebookInstanceStatus") or ""), described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        audited = str(self.audited_type(plan))
        now = str(observed.described.get("InstanceType") or "")
        if observed.status != "InService":
            return f"notebook instance {name} is {one_line(observed.status)}, not InService as the audit saw it"
        if now != audited:
            return (f"notebook instance {name} changed since the audit: it runs {one_line(now)}, the plan was made on "
                    f"{one_line(audited)}; run the audit again")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        outcome, message, _ = poll(plan, Waiting(
            "DescribeNotebookInstance", lambda: api.describe_notebook_instance(NotebookInstanceName=plan.resource.name),
            "NotebookInstanceStatus", done="Stopped", in_progress=frozenset({"Stopping", "InService"})),
            wait_minutes, sleep, clock)
        return outcome, message


_APP_KEYS = ("DomainId", "UserProfileName", "SpaceName", "AppType", "AppName")


class StudioAppTarget(Target):
    """A Studio app deleted (DeleteApp): the space (or user profile) and its storage are kept."""

    noun = "Studio app"

    @staticmethod
    def _keys(plan: PlanToApply) -> dict[str, Any]:
        calls = plan.calls_of("sagemaker", "DeleteApp")
        return {k: v for k, v in calls[0].params.items() if k in _APP_KEYS} if calls else {}

    def plan_problem(self, plan: PlanToApply) -> str | None:
        keys = self._keys(plan)
        if not {"DomainId", "AppType", "AppName"} <= set(keys) or not ({"UserProfileName", "SpaceName"} & set(keys)):
            return "its change has no DeleteApp naming the domain, the space or user profile, the app type and name"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        keys = self._keys(plan)
        described = _read(plan, "DescribeApp", lambda: api.describe_app(**keys))
        return Observed(str(described.get("AppArn") or ""), str(described.get("Status") or ""), described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        if observed.status != "InService":
            return (f"Studio app {one_line(plan.resource.name)} is {one_line(observed.status)}, not InService as "
                    "the audit saw it")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        keys = self._keys(plan)
        outcome, message, _ = poll(plan, Waiting(
            "DescribeApp", lambda: api.describe_app(**keys), "Status", done="Deleted",
            in_progress=frozenset({"Deleting", "InService"}), gone_is_done=True), wait_minutes, sleep, clock)
        return outcome, message


class ClusterTarget(Target):
    """HyperPod nodes deleted (BatchDeleteClusterNodes): the group shrinks by those nodes."""

    noun = "HyperPod cluster"

    @staticmethod
    def _delete(plan: PlanToApply) -> tuple[str, list[str]]:
        calls = plan.calls_of("sagemaker", "BatchDeleteClusterNodes")
        params = calls[0].params if calls else {}
        nodes = params.get("NodeIds")
        return str(params.get("ClusterName") or ""), [str(n) for n in nodes] if isinstance(nodes, list) else []

    def plan_problem(self, plan: PlanToApply) -> str | None:
        cluster, nodes = self._delete(plan)
        if not cluster or not nodes:
            return "its change has no BatchDeleteClusterNodes naming the cluster and the nodes"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        cluster, _ = self._delete(plan)
        described = _read(plan, "DescribeCluster", lambda: api.describe_cluster(ClusterName=cluster))
        try:
            pages = api.get_paginator("list_cluster_nodes").paginate(ClusterName=cluster)
            present = sorted({str(n.get("InstanceId")) for page in pages for n in page.get("ClusterNodeSummaries", [])})
        except _ERRORS as exc:
            raise ApplyRefused(f"{plan_noun(plan)}: "
                               + describe_client_error(exc, "sagemaker", "ListClusterNodes", plan.resource.region)
                               ) from None
        return Observed(str(described.get("ClusterArn") or ""), str(described.get("ClusterStatus") or ""),
                        {**described, "NodeIds": present})

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        if observed.status != "InService":
            return (f"HyperPod cluster {name} is {one_line(observed.status)}, not InService: nothing is changed "
                    "while it is")
        _, nodes = self._delete(plan)
        missing = [n for n in nodes if n not in set(observed.described.get("NodeIds") or ())]
        if missing:
            return (f"HyperPod cluster {name} changed since the audit: node{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(one_line(n) for n in missing)} no longer exist{'' if len(missing) > 1 else 's'}; "
                    "run the audit again")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        cluster, nodes = self._delete(plan)
        failed = [f for answer in answers for f in answer.get("Failed") or []]
        if failed:
            said = "; ".join(f"{one_line(str(f.get('NodeId')))}: {one_line(str(f.get('Code')))} "
                             f"{one_line(str(f.get('Message') or ''))}".strip() for f in failed)
            return "failed", (f"plan {plan.id} failed: BatchDeleteClusterNodes did not delete {len(failed)} of "
                              f"{len(nodes)} nodes of {one_line(cluster)}: {said}")
        api = clients.client("sagemaker", plan.resource.region)
        outcome, message, _ = poll(plan, Waiting(
            "DescribeCluster", lambda: api.describe_cluster(ClusterName=cluster), "ClusterStatus", done="InService",
            in_progress=frozenset({"Updating", "SystemUpdating"})), wait_minutes, sleep, clock)
        if outcome == "applied":
            outages = message[len(f"plan {plan.id} applied: {plan_noun(plan)} is InService"):]
            message = (f"plan {plan.id} applied: {len(nodes)} node{'s' if len(nodes) > 1 else ''} of "
                       f"{one_line(cluster)} deleted; the cluster is InService{outages}")
        return outcome, message


# The keys of IdleSettings an idle-shutdown plan sets (auditor/kinds/workspaces/change.py); every other
# setting of the app type is copied as DescribeDomain answered it for the audit.
_IDLE_SWITCH = ("LifecycleManagement", "IdleTimeoutInMinutes")


def _without_idle_switch(settings: dict[str, Any]) -> dict[str, Any]:
    """App settings without what the plan sets, and without the empty objects that leaves (an
    AppLifecycleManagement with nothing else in it is the same as none)."""
    lifecycle = dict(settings.get("AppLifecycleManagement") or {})
    idle = {k: v for k, v in (lifecycle.get("IdleSettings") or {}).items() if k not in _IDLE_SWITCH}
    lifecycle = {k: v for k, v in lifecycle.items() if k != "IdleSettings"} | ({"IdleSettings": idle} if idle else {})
    rest = {k: v for k, v in settings.items() if k != "AppLifecycleManagement"}
    return rest | ({"AppLifecycleManagement": lifecycle} if lifecycle else {})


class StudioDomainTarget(Target):
    """A Studio domain's idle shutdown turned on (UpdateDomain with the default settings of its
    JupyterLab and Code Editor apps, each copied as the audit described it, idle shutdown ENABLED)."""

    noun = "Studio domain"

    @staticmethod
    def _update(plan: PlanToApply) -> tuple[str, dict[str, dict[str, Any]]]:
        """The domain id, and the app settings the UpdateDomain sets, by their key."""
        calls = plan.calls_of("sagemaker", "UpdateDomain")
        params = calls[0].params if calls else {}
        defaults = params.get("DefaultUserSettings")
        settings = {k: v for k, v in defaults.items() if k in IDLE_SETTING_APPS.values() and isinstance(v, dict)
                    } if isinstance(defaults, dict) else {}
        return str(params.get("DomainId") or ""), settings

    @staticmethod
    def _app(key: str) -> str:
        return next(app for app, setting in IDLE_SETTING_APPS.items() if setting == key)

    def plan_problem(self, plan: PlanToApply) -> str | None:
        domain, settings = self._update(plan)
        if not domain or not settings:
            return ("its change has no UpdateDomain naming the domain and the JupyterLab or Code Editor settings it "
                    "sets")
        if domain != plan.resource.name:
            return f"its UpdateDomain names domain {one_line(domain)}, the plan is for {one_line(plan.resource.name)}"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        domain, _ = self._update(plan)
        described = _read(plan, "DescribeDomain", lambda: api.describe_domain(DomainId=domain))
        return Observed(str(described.get("DomainArn") or ""), str(described.get("Status") or ""), described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        if observed.status != "InService":
            return f"Studio domain {name} is {one_line(observed.status)}, not InService: nothing is changed while it is"
        _, settings = self._update(plan)
        now = observed.described.get("DefaultUserSettings") or {}
        for key, planned in sorted(settings.items()):
            value = now.get(key)
            current: dict[str, Any] = value if isinstance(value, dict) else {}
            minutes = idle_minutes(current)
            if minutes is not None:
                return (f"Studio domain {name} changed since the audit: idle shutdown of {self._app(key)} apps is on "
                        f"now ({minutes} min); run the audit again")
            if _without_idle_switch(current) != _without_idle_switch(planned):
                return (f"Studio domain {name} changed since the audit: its {key} are not the ones the plan copied "
                        "(the update would overwrite the change); run the audit again")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        domain, settings = self._update(plan)
        outcome, message, described = poll(plan, Waiting(
            "DescribeDomain", lambda: api.describe_domain(DomainId=domain), "Status", done="InService",
            in_progress=frozenset({"Updating", "Pending"})), wait_minutes, sleep, clock)
        if outcome != "applied" or described is None:
            return outcome, message
        now = described.get("DefaultUserSettings") or {}
        apps = [self._app(key) for key in sorted(settings)]
        off = [self._app(key) for key in sorted(settings) if idle_minutes(now.get(key)) is None]
        if off:
            return "failed", (f"plan {plan.id} failed: Studio domain {one_line(domain)} is InService, but idle "
                              f"shutdown of {' and '.join(off)} apps is not on")
        return "applied", (f"plan {plan.id} applied: Studio domain {one_line(domain)} is InService with idle shutdown "
                           f"on for {' and '.join(apps)} apps")


# The resource types apply changes, by the plan's resource_type.
TARGETS: dict[str, Target] = {
    "endpoint": EndpointTarget(),
    "notebook-instance": NotebookTarget(),
    "studio-app": StudioAppTarget(),
    "hyperpod-cluster": ClusterTarget(),
    "studio-domain": StudioDomainTarget(),
}
# A job's change is the next run's request: apply never starts a job.
JOB_TYPES = frozenset({"training-job", "processing-job", "transform-job"})
