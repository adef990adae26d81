"""An endpoint's apply target: DescribeEndpoint (with its variants' scalable targets and policies,
and the inference components a call names); unchanged = the audited config, InService, the shape
the plan was computed from (its basis); waits for a deployment (UpdateEndpoint) to end InService on
the new config (or rolled back), for a deleted endpoint to be gone, and for nothing else (settings
around it: schedules, scheduled actions, alarms, scaling policies, read back by auditor.act.readback).

The shared endpoint a consolidation creates (type "shared-endpoint", SharedEndpointTarget): read now,
each member endpoint (DescribeEndpoint, and DescribeEndpointConfig of the config it runs: its
variant's model), the shared endpoint if it exists (and its tags) and each inference component the
plan names; unchanged = every member InService on the config and model the plan was made on, the
shared endpoint absent or made by this plan (its tag `auditor:plan`: a retry continues from what
exists), no component name taken elsewhere; waits for the shared endpoint InService (the components
are created only then), then for each component InService (one that fails gives its FailureReason).
Apply never deletes or updates a member endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import ApplyConfig
from auditor.kinds.endpoints.binding import (
    component_calls,
    members_of,
    named_components,
    observed_refusal,
    passed_role,
)
from auditor.kinds.endpoints.change import SCALABLE_DIMENSION
from auditor.kinds.endpoints.consolidation import SHARED_TYPE, shared_name
from auditor.kinds.endpoints.evidence import DESTRUCTIVE
from auditor.recommend.change import PLAN_TAG
from auditor.text import one_line
from auditor.write.plan import ApplyRefused, PlanToApply
from auditor.write.target import ERRORS, Observed, Target, Waiting, gone, poll


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


def _scaling(target: Target, clients: AwsClients, plan: PlanToApply,
             variants: list[str]) -> dict[str, tuple[int, int, tuple[str, ...]]]:
    """Each variant's scalable target now: (min, max, its policies as "name (type)", sorted)."""
    if not variants:
        return {}
    api = clients.client("application-autoscaling", plan.resource.region)
    ids = {f"endpoint/{plan.resource.name}/variant/{v}": v for v in variants}
    targets = target.read(plan, "DescribeScalableTargets", lambda: [
        t for page in api.get_paginator("describe_scalable_targets").paginate(
            ServiceNamespace="sagemaker", ResourceIds=sorted(ids), ScalableDimension=SCALABLE_DIMENSION)
        for t in page.get("ScalableTargets", [])], "application-autoscaling")
    found: dict[str, tuple[int, int, tuple[str, ...]]] = {}
    for scalable in targets:
        resource = str(scalable.get("ResourceId"))
        if resource not in ids:
            continue
        pages = api.get_paginator("describe_scaling_policies").paginate(
            ServiceNamespace="sagemaker", ResourceId=resource, ScalableDimension=SCALABLE_DIMENSION)
        policies: list[str] = target.read(plan, "DescribeScalingPolicies", partial(_policy_names, pages),
                                          "application-autoscaling")
        found[ids[resource]] = (int(scalable.get("MinCapacity", 0)), int(scalable.get("MaxCapacity", 0)),
                                tuple(policies))
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
    in_progress: frozenset[str] = frozenset({"Updating", "SystemUpdating", "RollingBack", "Creating"})
    reads = frozenset({
        ("sagemaker", "DescribeEndpoint"),
        ("sagemaker", "DescribeEndpointConfig"),  # the audited config a copy is held to
        # the variants' targets and policies, as the plan saw them (drift)
        ("application-autoscaling", "DescribeScalableTargets"),
        ("application-autoscaling", "DescribeScalingPolicies"),
        ("sagemaker", "ListInferenceComponents"),  # the components a plan's call names are the endpoint's
    })

    def opt_in_patterns(self, config: ApplyConfig) -> tuple[tuple[str, ...], str]:
        return (*config.resources, *config.endpoints), "[apply] endpoints or [apply] resources"

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
        (ListInferenceComponents) when a call names one, or deletes the endpoint (their requests
        are its requests: evidence.py)."""
        api = clients.client("sagemaker", plan.resource.region)
        name = plan.resource.name
        described = self.described(plan, "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=name))
        variants = [str(v.get("VariantName")) for key in ("ProductionVariants", "ShadowProductionVariants")
                    for v in described.get(key) or []]
        scaling = _scaling(self, clients, plan, variants)
        components = None
        # Those a call names, and for a destructive plan every one (the variant publishes no requests
        # for them: fresh evidence reads each component's).
        if named_components(plan) or {c.operation for c in (plan.change.calls if plan.change else ())} & DESTRUCTIVE:
            components = self.read(plan, "ListInferenceComponents", lambda: {
                str(c.get("InferenceComponentName"))
                for page in api.get_paginator("list_inference_components").paginate(EndpointNameEquals=name)
                for c in page.get("InferenceComponents", [])})
        config = None
        if plan.calls_of("sagemaker", "CreateEndpointConfig") and plan.audited_config \
                and described.get("EndpointConfigName") == plan.audited_config:  # otherwise `changed` refuses
            audited = plan.audited_config
            config = self.described(plan, "DescribeEndpointConfig", lambda: api.describe_endpoint_config(
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
                self.named(plan), "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name),
                "EndpointStatus", done=None, in_progress=frozenset({"Deleting", "InService"}), gone_is_done=True),
                wait_minutes, sleep, clock)
            return outcome, message
        if not plan.calls_of("sagemaker", "UpdateEndpoint"):
            return "applied", f"plan {plan.id} applied: endpoint {name} stays on {one_line(plan.audited_config or '')}"
        target, old = plan.target_config, plan.audited_config
        minutes, source = deployment_wait(plan, wait_minutes)
        outcome, message, described = poll(plan, Waiting(
            self.named(plan), "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name),
            "EndpointStatus", done="InService", in_progress=self.in_progress,
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


def _status_of(described: Mapping[str, Any] | None) -> str:
    return "absent" if described is None else str(described.get("EndpointStatus") or "")


class SharedEndpointTarget(Target):
    """A new endpoint hosting one inference component per member endpoint."""

    noun = "shared endpoint"
    in_progress: frozenset[str] = frozenset({"Creating", "Updating", "SystemUpdating"})
    reads = frozenset({
        ("sagemaker", "DescribeEndpoint"),  # the members and the shared endpoint
        ("sagemaker", "DescribeEndpointConfig"),  # the model each member runs
        ("sagemaker", "DescribeInferenceComponent"),  # the names the components take, then their wait
        ("sagemaker", "DescribeModel"),  # the role each member's model runs with: the one the config passes
        ("sagemaker", "ListTags"),  # who made a shared endpoint that exists (auditor:plan)
    })
    component_in_progress = frozenset({"Creating", "Updating"})

    def opt_in_patterns(self, config: ApplyConfig) -> tuple[tuple[str, ...], str]:
        return (*config.resources, *config.endpoints), "[apply] endpoints or [apply] resources"

    def opt_in_resources(self, plan: PlanToApply, observed: Observed) -> list[tuple[str, str, str]]:
        """Every member endpoint must be opted in (the plan acts for them: what it creates takes
        their traffic); the shared endpoint does not exist to carry a tag."""
        members: dict[str, Any] = observed.described.get("Members") or {}
        return [(f"member endpoint {one_line(name)}", str((member.get("Endpoint") or {}).get("EndpointArn") or ""),
                 name) for name, member in members.items()]

    def plan_problem(self, plan: PlanToApply) -> str | None:
        members = members_of(plan)
        if not members:
            return "it does not record its member endpoints (basis.members): run the audit again"
        names = [str(m.get("endpoint")) for m in members]
        if shared_name(names) != plan.resource.name:
            return (f"its members ({', '.join(one_line(n) for n in sorted(names))}) are not those shared endpoint "
                    f"{one_line(plan.resource.name)} is named for: the stored plan was edited; run the audit again")
        if not plan.calls_of("sagemaker", "CreateEndpoint"):
            return "it creates no endpoint (CreateEndpoint)"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        members: dict[str, dict[str, Any]] = {}
        for member in members_of(plan):
            name = str(member.get("endpoint"))
            described = self._maybe(plan, "DescribeEndpoint", partial(api.describe_endpoint, EndpointName=name))
            config = None
            if described is not None and described.get("EndpointConfigName") == member.get("endpoint_config"):
                config = self._maybe(plan, "DescribeEndpointConfig", partial(
                    api.describe_endpoint_config, EndpointConfigName=str(member.get("endpoint_config"))))
            model = None
            if config is not None and passed_role(plan) is not None:
                model = self._model(api, plan, str(member.get("model")))
            members[name] = {"Endpoint": described, "Config": config, "Model": model}
        shared = self._maybe(plan, "DescribeEndpoint", partial(api.describe_endpoint, EndpointName=plan.resource.name))
        tags: dict[str, str] = {}
        if shared is not None:
            arn = str(shared.get("EndpointArn"))
            tags = self.read(plan, "ListTags", lambda: {
                str(t["Key"]): str(t["Value"]) for page in api.get_paginator("list_tags").paginate(ResourceArn=arn)
                for t in page.get("Tags", [])})
        components = {}
        for params in component_calls(plan):
            name = str(params.get("InferenceComponentName"))
            components[name] = self._maybe(plan, "DescribeInferenceComponent", partial(
                api.describe_inference_component, InferenceComponentName=name))
        return Observed(str((shared or {}).get("EndpointArn") or ""), _status_of(shared),
                        {"Shared": shared, "SharedTags": tags, "Members": members, "Components": components})

    def _model(self, api: Any, plan: PlanToApply, model: str) -> dict[str, Any] | None:
        """DescribeModel of a member's model (the role it runs with); None when it is gone."""
        return self._maybe(plan, "DescribeModel", lambda: api.describe_model(ModelName=model))

    def _maybe(self, plan: PlanToApply, operation: str, call: Callable[[], Any]) -> dict[str, Any] | None:
        """A Describe call's answer; None when AWS says the resource is not there."""
        try:
            return dict(call())
        except ERRORS as exc:
            if gone(exc):
                return None
            problem = describe_client_error(exc, "sagemaker", operation, plan.resource.region)
            raise ApplyRefused(f"{self.named(plan)}: {problem}") from None

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        members: dict[str, dict[str, Any]] = observed.described.get("Members") or {}
        for member in members_of(plan):
            name = str(member.get("endpoint"))
            who = f"member endpoint {one_line(name)}"
            seen = members.get(name) or {}
            described = seen.get("Endpoint")
            if described is None:
                return f"{who} is gone: run the audit again"
            config = str(described.get("EndpointConfigName") or "")
            if config != member.get("endpoint_config"):
                return (f"{who} changed since the audit: its config is now {one_line(config)!r}, the plan was made on "
                        f"{one_line(str(member.get('endpoint_config')))!r}; run the audit again")
            status = str(described.get("EndpointStatus") or "")
            if status != "InService":
                return f"{who} is {one_line(status)}, not InService: nothing is made while it is"
            variants = {str(v.get("VariantName")): v for v in (seen.get("Config") or {}).get("ProductionVariants")
                        or []}
            model = (variants.get(str(member.get("variant"))) or {}).get("ModelName")
            if model != member.get("model"):
                return (f"{who} runs model {one_line(str(model))} on variant {one_line(str(member.get('variant')))}, "
                        f"not {one_line(str(member.get('model')))} as the plan was made on; run the audit again")
            role = passed_role(plan)
            if role is not None and seen.get("Model") is None:
                return f"{who}'s model {one_line(str(model))} is gone: run the audit again"
            runs_with = (seen.get("Model") or {}).get("ExecutionRoleArn")
            if role is not None and runs_with != role:
                return (f"{who}'s model {one_line(str(model))} runs with role {one_line(str(runs_with))}, not "
                        f"{one_line(role)}, which the plan's endpoint config passes: nothing is made; run the audit "
                        "again")
        shared = observed.described.get("Shared")
        tags: dict[str, str] = observed.described.get("SharedTags") or {}
        if shared is not None and tags.get(PLAN_TAG) != plan.id:
            made_by = f"plan {one_line(tags[PLAN_TAG])}" if PLAN_TAG in tags else "no plan (no tag auditor:plan)"
            return (f"shared endpoint {one_line(plan.resource.name)} exists and was made by {made_by}, not by plan "
                    f"{plan.id}: nothing is made")
        for name, component in (observed.described.get("Components") or {}).items():
            if component is not None and component.get("EndpointName") != plan.resource.name:
                return (f"inference component {one_line(name)} exists on endpoint "
                        f"{one_line(str(component.get('EndpointName')))}: the name is taken; nothing is made")
        return None

    def doing(self, clients: AwsClients, plan: PlanToApply) -> str:
        try:
            observed = self.observe(clients, plan)
        except ApplyRefused as exc:
            return f"its state could not be read ({exc})"
        name, status = one_line(plan.resource.name), one_line(observed.status)
        if observed.status == "absent":
            return f"shared endpoint {name} was not created"
        going = [f"{one_line(n)} {one_line(str(c.get('InferenceComponentStatus')))}"
                 for n, c in (observed.described.get("Components") or {}).items() if c is not None]
        said = f"shared endpoint {name} is {status}"
        if observed.status in self.in_progress:
            said += "; its creation goes on"
        return said + (f"; inference components: {', '.join(going)}" if going else "")

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        """The shared endpoint InService (created or found by a retry); Failed gives its reason."""
        api = clients.client("sagemaker", plan.resource.region)
        outcome, message, _ = poll(plan, Waiting(
            self.named(plan), "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name),
            "EndpointStatus", done="InService", in_progress=frozenset({"Creating"}),
            at_deadline="its creation goes on; a retry of the plan continues from it"), wait_minutes, sleep, clock)
        return outcome, message

    def settle_after(self, clients: AwsClients, plan: PlanToApply, wait_minutes: float,
                     sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str] | None:
        """Each inference component InService, one after the other within one deadline; the first that
        fails gives its FailureReason."""
        api = clients.client("sagemaker", plan.resource.region)
        names = [str(p.get("InferenceComponentName")) for p in component_calls(plan)]
        started = clock()
        for name in names:
            left = wait_minutes - (clock() - started) / 60
            outcome, message, _ = poll(plan, Waiting(
                f"inference component {one_line(name)}", "DescribeInferenceComponent",
                partial(api.describe_inference_component, InferenceComponentName=name),
                "InferenceComponentStatus", done="InService", in_progress=self.component_in_progress,
                at_deadline="its creation goes on; a retry of the plan continues from it"), max(left, 0.0), sleep,
                clock)
            if outcome != "applied":
                return outcome, message
        listed = ", ".join(one_line(n) for n in names)
        return "applied", (f"plan {plan.id} applied: shared endpoint {one_line(plan.resource.name)} is InService "
                           f"hosting {len(names)} inference component{'s' if len(names) != 1 else ''} ({listed}); "
                           "the member endpoints are unchanged: callers move to InvokeEndpoint with "
                           "InferenceComponentName before their deletes are proposed")


TARGETS: dict[str, Target] = {"endpoint": EndpointTarget(), SHARED_TYPE: SharedEndpointTarget()}
