"""Fresh evidence before a destructive endpoint plan (a delete, or off-hours), read with
GetMetricData (one request per 500 queries): per variant Invocations (Sum) and CPUUtilization
(Maximum), and for async endpoints, which publish no Invocations, the requests they processed
(TotalProcessingTime SampleCount, per variant) and their queue (ApproximateBacklogSize Maximum,
EndpointName only); for each inference component the endpoint hosts now (ListInferenceComponents,
read live: a component added since the audit serves too) or the plan's calls name (off-hours'
scheduled copies), its Invocations (InferenceComponentName: the variant publishes none for
components). Any request, any queued request, or CPU over the idle rule's ceiling (per vCPU, the
variant's type as the plan saw it) refuses. For off-hours only the hours of the week the schedules
would have it off are read.
"""

from __future__ import annotations

from datetime import datetime

from auditor.analyse.rules.base import settings_of
from auditor.catalog import load_catalog
from auditor.kinds.endpoints.binding import COMPONENT_PREFIX, component_calls, members_of
from auditor.kinds.endpoints.consolidation import SHARED_TYPE
from auditor.kinds.endpoints.rules.idle import RULE as IDLE
from auditor.text import one_line
from auditor.write.evidence import PERIOD_SECONDS, EvidenceCheck, Since, metric_data, query
from auditor.write.plan import ApplyRefused, PlanToApply

OFF_HOURS_PERIOD_SECONDS = 3600  # the off-hours are whole hours of the week
HOURS_PER_WEEK = 168
DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


def off_hours_of_week(plan: PlanToApply) -> set[int] | None:
    """The hours of the week (0 = Monday 00:00 UTC) the plan's schedules have the endpoint off
    (proposed.details.off_periods_utc); None when the plan is not an off-hours plan."""
    details = plan.proposed.get("details") if isinstance(plan.proposed.get("details"), dict) else {}
    periods = details.get("off_periods_utc") if isinstance(details, dict) else None
    if plan.proposed.get("action") != "off-hours" or not isinstance(periods, list):
        return None
    hours: set[int] = set()
    for period in periods:
        try:
            day, clock = str(period["from"]).split()
            first = DAYS.index(day.upper()) * 24 + int(clock.split(":")[0])
            hours |= {(first + i) % HOURS_PER_WEEK for i in range(int(period["hours"]))}
        except (KeyError, TypeError, ValueError):
            raise ApplyRefused(f"endpoint {one_line(plan.resource.name)}: its off periods cannot be read "
                               "(proposed.details.off_periods_utc); run the audit again") from None
    return hours


def _hour_of_week(moment: datetime) -> int:
    return moment.weekday() * 24 + moment.hour


# The calls that make an endpoint plan destructive: fresh evidence is read before them.
DESTRUCTIVE = frozenset({"DeleteEndpoint", "CreateSchedule", "PutScheduledAction"})

def endpoint_since(since: Since) -> str | None:
    plan = since.plan
    off = off_hours_of_week(plan)
    period = OFF_HOURS_PERIOD_SECONDS if off is not None else PERIOD_SECONDS
    variants = [str(v.get("VariantName")) for v in since.observed.described.get("ProductionVariants") or []]
    queries = [query("backlog", "AWS/SageMaker", "ApproximateBacklogSize", {"EndpointName": plan.resource.name},
                     "Maximum", period)]
    for index, variant in enumerate(variants):
        named = {"EndpointName": plan.resource.name, "VariantName": variant}
        queries += [query(f"inv{index}", "AWS/SageMaker", "Invocations", named, "Sum", period),
                    query(f"done{index}", "AWS/SageMaker", "TotalProcessingTime", named, "SampleCount", period),
                    query(f"cpu{index}", "/aws/sagemaker/Endpoints", "CPUUtilization", named, "Maximum", period)]
    # An endpoint hosting inference components publishes its requests per component only: those the
    # plan's calls name (off-hours' scheduled copies) and those it hosts now.
    components = sorted(set(_components_named(plan)) | _components_hosted(since))
    queries += [query(f"component{i}", "AWS/SageMaker", "Invocations", {"InferenceComponentName": component},
                      "Sum", period) for i, component in enumerate(components)]
    found = metric_data(since, queries)

    def values(query_id: str) -> list[float]:
        return [v for t, v in found.get(query_id, []) if off is None or _hour_of_week(t) in off]

    name = one_line(plan.resource.name)
    during = " in the hours the schedules would have it off" if off is not None else ""
    requests = sum(sum(values(f"inv{i}")) + sum(values(f"done{i}")) for i in range(len(variants)))
    if requests > 0:
        return f"endpoint {name} served {requests:,.0f} requests{during} {since.when}; run the audit again"
    for index, component in enumerate(components):
        if (served := sum(values(f"component{index}"))) > 0:
            return (f"endpoint {name}'s inference component {one_line(component)} served {served:,.0f} requests"
                    f"{during} {since.when}; run the audit again")
    queued = max(values("backlog"), default=0.0)
    if queued > 0:
        return f"endpoint {name} had {queued:,.0f} requests queued{during} {since.when}; run the audit again"
    ceiling = settings_of(IDLE, since.config).idle_ceiling_percent
    for index, variant in enumerate(variants):
        busiest = max(values(f"cpu{index}"), default=None)
        vcpus = _vcpus(plan, variant)
        if busiest is not None and busiest / vcpus > ceiling:
            return (f"endpoint {name}'s variant {one_line(variant)} ran up to {busiest / vcpus:.1f}% CPU per vCPU"
                    f"{during} {since.when} (idle: at most {ceiling:g}%); run the audit again")
    return None


def _components_named(plan: PlanToApply) -> list[str]:
    """The inference components the plan's calls act on (`inference-component/<name>` resources)."""
    calls = plan.change.calls if plan.change else ()
    return sorted({str(c.params.get("ResourceId"))[len(COMPONENT_PREFIX):] for c in calls
                   if str(c.params.get("ResourceId") or "").startswith(COMPONENT_PREFIX)})


def _components_hosted(since: Since) -> set[str]:
    """The inference components the endpoint hosts now, as the target read them (EndpointTarget lists
    them for every plan DESTRUCTIVE makes destructive; a failed or denied list refused there)."""
    if since.observed.components is None:
        raise ApplyRefused(f"{since.who}: the inference components it hosts were not read, so the requests they "
                           "served cannot be")
    return since.observed.components


def _vcpus(plan: PlanToApply, variant: str) -> float:
    """The variant's vCPUs as the plan saw its type (CPUUtilization is summed over them); 1 unknown."""
    basis = plan.basis or {}
    kind = next((v.get("instance_type") for v in basis.get("variants") or []
                 if isinstance(v, dict) and v.get("name") == variant), None)
    shape = load_catalog().shape(kind) if isinstance(kind, str) else None
    return float(shape.vcpu) if shape is not None and shape.vcpu else 1.0


# --- a consolidation: no member busier than its copies reserve -----------------------------------


def _reserved_cores(plan: PlanToApply) -> dict[str, float]:
    """Each member's CPU cores its copies reserve (NumberOfCpuCoresRequired x copies), from the
    plan's CreateInferenceComponent calls (component = the member endpoint's name)."""
    reserved = {}
    for params in component_calls(plan):
        spec = params.get("Specification") or {}
        cores = (spec.get("ComputeResourceRequirements") or {}).get("NumberOfCpuCoresRequired")
        copies = (params.get("RuntimeConfig") or {}).get("CopyCount")
        if isinstance(cores, int | float) and isinstance(copies, int) and not isinstance(copies, bool):
            reserved[str(params.get("InferenceComponentName"))] = float(cores) * copies
    return reserved


def _instance_counts(plan: PlanToApply) -> dict[str, int]:
    """Each member's instance count as the audit read it (proposed.details.members)."""
    details = plan.proposed.get("details")
    members = details.get("members") if isinstance(details, dict) else None
    counts = {}
    for member in members if isinstance(members, list) else ():
        count = member.get("instance_count") if isinstance(member, dict) else None
        if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
            counts[str(member.get("endpoint"))] = count
    return counts


def shared_since(since: Since) -> str | None:
    """Since the audit's window ended, each member's CPU must stay within the cores its copies
    reserve on the shared fleet: a member that grew since the audit would not fit what the plan
    packs. Read as the rule reads it (consolidation.py): the variant's CPUUtilization Maximum (the
    hottest instance, the sum over its vCPUs: 100 per core busy) times its instance count."""
    plan = since.plan
    reserved = _reserved_cores(plan)
    counts = _instance_counts(plan)
    members = [m for m in members_of(plan) if str(m.get("endpoint")) in reserved]
    queries = [query(f"cpu{i}", "/aws/sagemaker/Endpoints", "CPUUtilization",
                     {"EndpointName": str(m.get("endpoint")), "VariantName": str(m.get("variant"))}, "Maximum",
                     PERIOD_SECONDS) for i, m in enumerate(members)]
    if not queries:
        return None
    found = metric_data(since, queries)
    for index, member in enumerate(members):
        name = str(member.get("endpoint"))
        busiest = max((v for _, v in found.get(f"cpu{index}", [])), default=None)
        used = None if busiest is None else busiest / 100 * counts.get(name, 1)
        if used is not None and used > reserved[name]:
            return (f"member endpoint {one_line(name)} used up to {used:.2f} CPU cores {since.when}, more "
                    f"than its copies reserve on the shared endpoint ({reserved[name]:g}); run the audit again")
    return None


EVIDENCE: dict[str, EvidenceCheck] = {
    "endpoint": EvidenceCheck(DESTRUCTIVE, endpoint_since, reads=frozenset({("cloudwatch", "GetMetricData")})),
    SHARED_TYPE: EvidenceCheck(frozenset({"CreateInferenceComponent"}), shared_since,
                               reads=frozenset({("cloudwatch", "GetMetricData")})),
}
