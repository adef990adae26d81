"""`audit apply --yes` from the first write call to the recorded outcome.

- Every step is journaled (auditor.act.journal) before the next is taken.
- The calls up to UpdateEndpoint (or CreateEndpoint) are made, then the deployment (or the new
  endpoint) is waited for; the calls after it (registering an autoscaled variant again, its
  policies; a new endpoint's inference components) only once it is InService, as AWS's guide
  "Update endpoints that use auto scaling" says; then the target's second wait, if any (each
  inference component InService).
- A value a call takes from an earlier call's answer (an answer reference: a step-scaling
  policy's ARN in its alarm) is put in before the call, from that call's answer or read back from
  AWS (auditor.act.answers); one that cannot be answered fails the apply before the call.
- A call that fails is checked before it is called failed: AWS may have done it (a 500 after the
  change, and botocore's retry refused with "Cannot update in-progress endpoint"). What shows it
  done: `landed`.
- A create whose name exists (an endpoint config, an endpoint, an inference component: a retry of
  the same plan) is skipped when it is the one the call would make, and refused, naming it and the
  command that removes it, when it differs.
- Right before DeregisterScalableTarget and UpdateEndpoint the endpoint is read again and must be
  as the plan was made on it (a person's change in between fails the apply before the call).
- Right before DeregisterScalableTarget the target, its policies and its scheduled actions are
  read and journaled; on any failure after it, with the endpoint on its audited config, they are
  registered and put back as read. On the plan's config the old scaling would not fit the new
  shape: the plan's calls not made are named and `audit apply --cleanup` makes them. While a
  deployment still goes on (interrupted, timed out) nothing can be registered: the message says so
  and `audit apply --cleanup` does it once the endpoint is InService. After a change that landed,
  the scheduled actions read are put back.
- SIGINT and SIGTERM end the wait at once (a write call under way is finished and journaled first):
  outcome "interrupted", with the calls made and what AWS is still doing.
- What a failure leaves behind (the new config, the plan's alarms) is named with the command that
  removes it; after a rollback the rollback alarms the apply made are deleted.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import botocore.exceptions
from botocore import xform_name

from auditor.act.answers import answered, describe, referred_call
from auditor.act.cleanup import delete_alarms, leftovers_text, rollback_alarms_made
from auditor.act.journal import Journal, answer_fields
from auditor.act.live import check_rollback_alarms, read_tags
from auditor.act.plan import ApplyFailed, PlanToApply
from auditor.act.readback import READERS, missing_after
from auditor.act.restore import ScalingSnapshot, by_hand, read_scaling, registered, restore
from auditor.collect.session import AwsClients, describe_client_error
from auditor.errors import AuditorError
from auditor.history.store import HistoryError
from auditor.models import AnswerReference, ApiCall, references_in, resolve_references
from auditor.recommend.change import settable_tags
from auditor.signals import on_stop_signals
from auditor.text import one_line
from auditor.write.target import Target, gone

_ERRORS = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
# The calls whose error apply checks against what AWS shows (`Execution.landed`; docs/apply.md
# "When a call fails" has one row each).
LANDED_CHECKED = frozenset({
    ("sagemaker", "UpdateEndpoint"), ("sagemaker", "CreateEndpointConfig"), ("sagemaker", "DeleteEndpoint"),
    ("sagemaker", "CreateEndpoint"), ("sagemaker", "CreateInferenceComponent"),
    ("application-autoscaling", "DeregisterScalableTarget"), ("application-autoscaling", "RegisterScalableTarget"),
    *READERS,
})
# The calls the ones after them wait for: a deployment (UpdateEndpoint) or a new endpoint
# (CreateEndpoint) must be InService before the calls after it are made (the target's `settle`).
SETTLE_AFTER = frozenset({("sagemaker", "UpdateEndpoint"), ("sagemaker", "CreateEndpoint")})
# Creates AWS refuses for a name that exists: a retry of the same plan finds what its first attempt
# made, reused when it is what the call would make (`Execution._reused`).
REUSABLE = frozenset({("sagemaker", "CreateEndpointConfig"), ("sagemaker", "CreateEndpoint"),
                      ("sagemaker", "CreateInferenceComponent")})
# Read the endpoint again right before these: what they change must still be as the plan was made on.
_REOBSERVED = frozenset({("application-autoscaling", "DeregisterScalableTarget"), ("sagemaker", "UpdateEndpoint")})


class Interrupt(Exception):
    """SIGINT or SIGTERM arrived: raised at the next safe point (never inside a write call)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


@dataclass
class StopFlag:
    """Set by the signal handlers; checked between calls and in every wait."""

    signal_name: str | None = None
    event: threading.Event = field(default_factory=threading.Event)

    def set(self, name: str) -> None:
        self.signal_name = self.signal_name or name
        self.event.set()

    def check(self) -> None:
        if self.signal_name:
            raise Interrupt(self.signal_name)


def stop_on_signals(flag: StopFlag) -> contextlib.AbstractContextManager[None]:
    """SIGINT and SIGTERM set the flag for the apply's duration (main thread only); the handlers
    before are put back after."""
    return on_stop_signals(flag.set)


def interruptible(sleep: Callable[[float], None], flag: StopFlag) -> Callable[[float], None]:
    """A sleep that a signal ends at once (time.sleep is replaced by a wait on the flag's event;
    another sleep, a test's, is called as it is and the flag checked after it)."""

    def wait(seconds: float) -> None:
        flag.check()
        if sleep is time.sleep:
            flag.event.wait(seconds)
        else:
            sleep(seconds)
        flag.check()

    return wait


def same_body(body: Any, described: Any) -> bool:
    """Every field the request sets is in the description with the same value (a description adds
    fields of its own; numbers compare as numbers)."""
    if isinstance(body, dict):
        return isinstance(described, dict) and all(same_body(v, described.get(k)) for k, v in body.items())
    if isinstance(body, list):
        return (isinstance(described, list) and len(body) == len(described)
                and all(same_body(a, b) for a, b in zip(body, described, strict=True)))
    return bool(body == described)


# The creates apply reuses on a retry: operation -> (its noun, its name parameter, the read that
# describes it, the answer field it gives, the AWS CLI command that deletes it).
_CREATES = {
    "CreateEndpointConfig": ("endpoint config", "EndpointConfigName", "DescribeEndpointConfig", "EndpointConfigArn",
                             "delete-endpoint-config"),
    "CreateEndpoint": ("endpoint", "EndpointName", "DescribeEndpoint", "EndpointArn", "delete-endpoint"),
    "CreateInferenceComponent": ("inference component", "InferenceComponentName", "DescribeInferenceComponent",
                                 "InferenceComponentArn", "delete-inference-component"),
}


def _kebab(key: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(key))


def _difference(call: ApiCall, described: dict[str, Any]) -> str | None:
    """How what exists differs from what the create would make (a phrase), or None when it is the
    same: every setting the call makes is described with the same value (its tags aside: the
    Describe calls do not return them). An inference component is described with its copies as
    RuntimeConfig.DesiredCopyCount, and one that Failed is not reused."""
    body = {k: v for k, v in call.params.items() if k != "Tags"}
    if call.operation == "CreateInferenceComponent":
        copies = (body.pop("RuntimeConfig", None) or {}).get("CopyCount")
        if copies is not None and (described.get("RuntimeConfig") or {}).get("DesiredCopyCount") != copies:
            return "its copy count differs"
        if described.get("InferenceComponentStatus") == "Failed":
            reason = one_line(str(described.get("FailureReason") or "no reason given"))
            return f"it Failed: {reason}"
    if call.operation == "CreateEndpoint" and described.get("EndpointStatus") == "Failed":
        return f"it Failed: {one_line(str(described.get('FailureReason') or 'no reason given'))}"
    return None if same_body(body, described) else "its settings differ"


@dataclass
class Execution:
    clients: AwsClients
    plan: PlanToApply
    target: Target
    journal: Journal
    wait_minutes: float
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    flag: StopFlag
    # The answer of each call in journal.calls, in the same order ({} for one that landed: AWS shows
    # it done, its answer was an error); what later calls' answer references are resolved from.
    answers: list[dict[str, Any]] = field(default_factory=list)
    snapshot: ScalingSnapshot | None = None
    attempted: int = 0  # how many of the plan's calls were begun

    @property
    def region(self) -> str:
        return self.plan.resource.region

    @property
    def calls(self) -> tuple[ApiCall, ...]:
        return self.plan.change.calls if self.plan.change else ()

    def run(self) -> tuple[str, str]:
        """Make the change; (outcome, message), the journal finished with them."""
        calls = self.calls
        waited = next((i for i, c in enumerate(calls) if (c.service, c.operation) in SETTLE_AFTER), None)
        split = len(calls) if waited is None else waited + 1
        try:
            for call in calls[:split]:
                self.make(call)
            outcome, message = self.target.settle(self.clients, self.plan, self.answers, self.wait_minutes,
                                                  interruptible(self.sleep, self.flag), self.clock)
            if outcome != "applied":
                if split < len(calls):
                    message += f"; not made: {self._names(calls[split:])}"
            else:
                for call in calls[split:]:
                    self.make(call)
                after = self.target.settle_after(self.clients, self.plan, self.wait_minutes,
                                                 interruptible(self.sleep, self.flag), self.clock)
                if after is not None:
                    outcome, message = after
                missing = missing_after(self.clients, self.region, self.journal.calls) if outcome == "applied" else None
                if missing:
                    outcome, message = "failed", f"plan {self.plan.id}: {missing}"
        except ApplyFailed as exc:
            outcome, message = "failed", str(exc)
        except Interrupt as exc:
            outcome, message = "interrupted", self._interrupted(exc.signal_name, calls)
        except HistoryError as exc:  # the journal could not be written: no further call is made
            outcome, message = "failed", (f"plan {self.plan.id}: {exc}: stopped; calls made: "
                                          f"{self._names(self.journal.calls) or 'none'}")
        except AuditorError as exc:  # any other refusal on the way (a ListTags denied): failed, never in-progress
            outcome, message = "failed", (f"plan {self.plan.id}: {exc}; {len(self.journal.calls)} of {len(calls)} "
                                          "calls made before it")
        try:
            message = self._after(outcome, message)
        except HistoryError as exc:  # the undo's journal step could not be written: said, and finished below
            message += f"; the journal could not record what was undone ({exc})"
        message = one_line(message)  # names from the plan and AWS: never a second line
        try:
            self.journal.finish(outcome, message)
        except HistoryError as exc:  # said, not lost: the message is the record now
            raise ApplyFailed(f"{message}; the apply journal could not be finished ({exc}): calls made: "
                              f"{self._names(self.journal.calls) or 'none'}") from None
        return outcome, message

    @staticmethod
    def _names(calls: list[ApiCall] | tuple[ApiCall, ...]) -> str:
        return ", ".join(one_line(c.operation) for c in calls)

    # --- one call ---------------------------------------------------------------------------------

    def make(self, planned: ApiCall) -> None:
        self.flag.check()  # a signal between calls: the next one is not made
        self.attempted += 1
        call = self._resolved(self._with_source_tags(planned))
        op = (call.service, call.operation)
        if op in REUSABLE and self._reused(call):
            return
        if op in _REOBSERVED:
            self._still_as_audited(call)
        if op == ("application-autoscaling", "DeregisterScalableTarget") and not self._read_scaling(call):
            return
        if op == ("sagemaker", "UpdateEndpoint"):
            try:
                check_rollback_alarms(self.clients, self.region, call)
            except _ERRORS as exc:
                raise ApplyFailed(f"plan {self.plan.id}: "
                                  f"{describe_client_error(exc, 'cloudwatch', 'DescribeAlarms', self.region)}: "
                                  "UpdateEndpoint not called") from None
        api = self.clients.client(call.service, self.region)
        try:
            answer = dict(getattr(api, xform_name(call.operation))(**call.params))
        except _ERRORS as exc:
            problem = describe_client_error(exc, call.service, call.operation, self.region)
            evidence = self.landed(call)
            if evidence:
                self.journal.call(call, "landed", error=problem, evidence=evidence)
                self.answers.append({})
                self.flag.check()
                return
            self.journal.call(call, "failed", error=problem)
            raise ApplyFailed(f"plan {self.plan.id}: {problem}; {len(self.journal.calls)} of {len(self.calls)} calls "
                              "made before it") from None
        self.journal.call(call, "made", answer=answer_fields(answer))
        self.answers.append(answer)
        self.flag.check()  # a signal during the call is acted on now that it is journaled

    def _resolved(self, call: ApiCall) -> ApiCall:
        """The call with each answer reference in its params replaced by the answer of the call it
        names (made by this apply: its answer; landed or reused: read back from AWS). One that cannot
        be answered fails the apply before the call, naming it: a call is never made with a
        placeholder in it."""
        if not references_in(call.params):
            return call

        def answer_of(reference: AnswerReference) -> Any:
            index = referred_call(self.journal.calls, reference)
            problem = "this apply did not make that call"
            if index is not None:
                value, problem_or_none = answered(self.clients, self.region, self.journal.calls[index],
                                                  self.answers[index], reference)
                if problem_or_none is None:
                    return value
                problem = problem_or_none
            raise ApplyFailed(f"plan {self.plan.id}: {one_line(call.operation)} takes {describe(reference)}, which "
                              f"cannot be answered ({problem}): {one_line(call.operation)} not called; "
                              f"{len(self.journal.calls)} of {len(self.calls)} calls made before it")

        return replace(call, params=resolve_references(call.params, answer_of))

    def _still_as_audited(self, call: ApiCall) -> None:
        """Right before the calls that change the endpoint: it is read again and must still be as the
        plan was made on it (a person's UpdateEndpointWeightsAndCapacities since the first read is not
        overwritten); the target this apply deregistered itself counts as it was read."""
        try:
            observed = self.target.observe(self.clients, self.plan)
        except AuditorError as exc:
            raise ApplyFailed(f"{exc}: {call.operation} not called; {len(self.journal.calls)} of {len(self.calls)} "
                              "calls made before it") from None
        if self.snapshot is not None and self.snapshot.target is not None:
            variant = self.snapshot.resource_id.rpartition("/variant/")[2]
            policies = tuple(sorted(f"{p.get('PolicyName')} ({p.get('PolicyType', 'unknown')})"
                                    for p in self.snapshot.policies))
            observed = replace(observed, scaling={**(observed.scaling or {}), variant: (
                int(self.snapshot.target.get("MinCapacity", 0)), int(self.snapshot.target.get("MaxCapacity", 0)),
                policies)})
        drift = self.target.changed(self.plan, observed)
        if drift:
            raise ApplyFailed(f"plan {self.plan.id}: {drift}: {call.operation} not called; "
                              f"{len(self.journal.calls)} of {len(self.calls)} calls made before it")

    def _with_source_tags(self, call: ApiCall) -> ApiCall:
        """A copy of the endpoint config gets the tags of the config it copies, read now (the audit
        does not read a config's tags), besides the plan's own (`auditor:plan`), which win; AWS's
        own `aws:` tags cannot be set and are left out."""
        if ((call.service, call.operation) != ("sagemaker", "CreateEndpointConfig") or not self.plan.audited_config
                or self.plan.target_config is None):  # a new endpoint's config is no copy
            return call
        api = self.clients.client("sagemaker", self.region)
        try:
            source = api.describe_endpoint_config(EndpointConfigName=self.plan.audited_config)
        except _ERRORS as exc:
            raise ApplyFailed(f"plan {self.plan.id}: "
                              f"{describe_client_error(exc, 'sagemaker', 'DescribeEndpointConfig', self.region)}; "
                              f"{len(self.journal.calls)} of {len(self.calls)} calls made before it") from None
        own = [t for t in call.params.get("Tags") or [] if isinstance(t, dict)]
        keys = {t.get("Key") for t in own}
        copied = [t for t in settable_tags(read_tags(api, str(source["EndpointConfigArn"]), self.region))
                  if t["Key"] not in keys]
        return replace(call, params={**call.params, "Tags": [*own, *copied]}) if copied else call

    def _reused(self, call: ApiCall) -> bool:
        """AWS refuses a create for a name that exists (an endpoint config, an endpoint, an inference
        component): a retry of this plan finds what its first attempt made. The same body: skipped
        and journaled "reused"; another: refused, naming it and the command that removes it."""
        noun, key, read, answer_key, delete = _CREATES[call.operation]
        name = str(call.params.get(key))
        api = self.clients.client("sagemaker", self.region)
        try:
            described = dict(getattr(api, xform_name(read))(**{key: name}))
        except _ERRORS as exc:
            if gone(exc):
                return False
            raise ApplyFailed(f"plan {self.plan.id}: {describe_client_error(exc, 'sagemaker', read, self.region)}; "
                              f"{len(self.journal.calls)} of {len(self.calls)} calls made before it") from None
        differs = _difference(call, described)
        if differs is None:
            self.journal.call(call, "reused", evidence=f"{noun} {name} exists as this call makes it")
            self.answers.append({answer_key: described.get(answer_key)})
            return True
        self.journal.call(call, "failed", error=f"{noun} {name} exists: {differs}")
        raise ApplyFailed(
            f"plan {self.plan.id}: {noun} {one_line(name)} exists and is not the one this plan makes ({differs}); "
            f"{len(self.journal.calls)} of {len(self.calls)} calls made before it; remove it if nothing uses it: "
            f"aws sagemaker {delete} --{_kebab(key)} {one_line(name)} --region {self.region}")

    def _read_scaling(self, call: ApiCall) -> bool:
        """The target as it is, journaled before it is deregistered; False (the call skipped) when
        it is not registered (a retry after a deregister that was not undone)."""
        try:
            self.snapshot = read_scaling(self.clients, self.region, call.params)
        except _ERRORS as exc:
            problem = describe_client_error(exc, call.service, "DescribeScalableTargets", self.region)
            raise ApplyFailed(f"plan {self.plan.id}: the scalable target could not be read before it is "
                              f"deregistered: {problem}; {len(self.journal.calls)} of {len(self.calls)} calls made "
                              "before it") from None
        self.journal.record({"step": "read", "scaling": self.snapshot.to_dict()})
        if self.snapshot.target is None:
            self.journal.call(call, "skipped", evidence=f"{call.params.get('ResourceId')} is not registered")
            self.snapshot = None
            return False
        return True

    def landed(self, call: ApiCall) -> str | None:
        """What shows that a call which answered with an error was done all the same, or None."""
        params, region = call.params, self.region
        try:
            match (call.service, call.operation):
                case ("sagemaker", "UpdateEndpoint"):
                    described = self.clients.client("sagemaker", region).describe_endpoint(
                        EndpointName=params["EndpointName"])
                    status = str(described.get("EndpointStatus") or "")
                    pending = (described.get("PendingDeploymentSummary") or {}).get("EndpointConfigName")
                    target = params.get("EndpointConfigName")
                    if status in ("Updating", "SystemUpdating") and pending == target:
                        return f"endpoint {params['EndpointName']} is {status} to {target}"
                    if status == "InService" and described.get("EndpointConfigName") == target:
                        return f"endpoint {params['EndpointName']} is InService on {target}"
                case ("sagemaker", "CreateEndpointConfig" | "CreateEndpoint" | "CreateInferenceComponent"):
                    noun, key, read, _, _ = _CREATES[call.operation]
                    described = dict(getattr(self.clients.client("sagemaker", region), xform_name(read))(
                        **{key: params[key]}))
                    if _difference(call, described) is None:
                        return f"{noun} {params[key]} exists as the call makes it"
                case ("sagemaker", "DeleteEndpoint"):
                    try:
                        described = self.clients.client("sagemaker", region).describe_endpoint(
                            EndpointName=params["EndpointName"])
                    except botocore.exceptions.ClientError as exc:
                        if gone(exc):
                            return f"endpoint {params['EndpointName']} is gone"
                        raise
                    if described.get("EndpointStatus") == "Deleting":
                        return f"endpoint {params['EndpointName']} is Deleting"
                case ("application-autoscaling", "DeregisterScalableTarget"):
                    if registered(self.clients, region, params) is None:
                        return f"{params['ResourceId']} is not registered"
                case ("application-autoscaling", "RegisterScalableTarget"):
                    now = registered(self.clients, region, params)
                    if now and (now.get("MinCapacity"), now.get("MaxCapacity")) == (
                            params.get("MinCapacity"), params.get("MaxCapacity")):
                        return f"{params['ResourceId']} is registered as the call asks"
                case operation if operation in READERS:
                    name, exists, noun, key = READERS[operation]
                    if exists(self.clients.client(call.service, region), params):
                        return f"{noun} {params.get(key)} exists ({name})"
        except _ERRORS:
            return None  # it cannot be told: the call stays failed
        return None

    # --- after the outcome ------------------------------------------------------------------------

    def _deployment_going(self) -> bool:
        """UpdateEndpoint was made and the endpoint is still deploying (or cannot be read: then it
        may be). Nothing is registered again during a deployment."""
        if not self.journal.made("sagemaker", "UpdateEndpoint"):
            return False
        try:
            described = self.clients.client("sagemaker", self.region).describe_endpoint(
                EndpointName=self.plan.resource.name)
        except _ERRORS:
            return True
        return str(described.get("EndpointStatus") or "") in self.target.in_progress

    def _interrupted(self, signal_name: str, calls: tuple[ApiCall, ...]) -> str:
        made = self.journal.calls
        doing = self.target.doing(self.clients, self.plan)
        not_made = list(calls[self.attempted:])
        return (f"plan {self.plan.id} interrupted by {signal_name} after {len(made)} of {len(calls)} calls"
                f"{f' ({self._names(made)})' if made else ''}; {doing}"
                f"{f'; not made: {self._names(not_made)}' if not_made else ''}")

    def _after(self, outcome: str, message: str) -> str:
        """Undo what can be undone, name what is left (also when the journal cannot be written:
        the undo is made all the same, and the message says it)."""
        notes: list[str] = []
        deregistered = self.snapshot is not None and bool(
            self.journal.made("application-autoscaling", "DeregisterScalableTarget"))
        going = outcome != "applied" and self._deployment_going()
        if deregistered and self.snapshot is not None:
            if outcome == "applied":
                notes += self._actions_back(self.snapshot)
            elif going:  # journaled as not restored: cleanup registers it once the deployment is over
                unrecorded = self._record({"step": "restore", "scaling": self.snapshot.resource_id, "made": [],
                                           "error": "not restored: the deployment goes on"})
                notes.append(f"the scalable target {self.snapshot.describe()} stays deregistered while the deployment "
                             "goes on: once the endpoint is InService, `audit apply --cleanup --yes` registers it "
                             "again: as read before the change if the endpoint is back on its audited config, as the "
                             f"plan's calls say if it is on the plan's{unrecorded}")
            else:
                notes.append(self._restore_or_name(self.snapshot))
        if outcome == "rolled-back":
            names = rollback_alarms_made(self.plan.raw, [c.params for c in self.journal.made(
                "cloudwatch", "PutMetricAlarm")], self.plan.id, self.plan.resource.name,
                self.plan.variant)
            if names:
                problem = delete_alarms(self.clients, self.region, names)
                unrecorded = self._record({"step": "cleanup", "alarms": names, "error": problem})
                if problem is None and not unrecorded:
                    unrecorded = self._record(None)
                notes.append((f"rollback alarms {', '.join(names)} deleted" if problem is None else
                              f"the rollback alarms could not be deleted ({problem}): "
                              f"aws cloudwatch delete-alarms --alarm-names {' '.join(names)} --region {self.region}")
                             + unrecorded)
        deployed = bool(self.journal.made("sagemaker", "UpdateEndpoint")) and outcome != "rolled-back"
        if outcome != "applied" and not deployed:  # a config (and alarms) a deployment runs on is no leftover
            left = leftovers_text(self.plan, self.journal.calls, deleted_alarms=outcome == "rolled-back")
            if left:
                notes.append(left)
        return message + "".join(f"; {note}" for note in notes)

    def _endpoint_config(self) -> str | None:
        """The config the endpoint runs on now (None: it cannot be read)."""
        try:
            described = self.clients.client("sagemaker", self.region).describe_endpoint(
                EndpointName=self.plan.resource.name)
        except _ERRORS:
            return None
        return str(described.get("EndpointConfigName") or "")

    def _restore_or_name(self, snapshot: ScalingSnapshot) -> str:
        """The scaling as read goes back only onto the shape it was read on: on the audited config it is
        registered again; on the plan's config the old min/max and policies would be wrong for the new
        shape, so the plan's own calls after UpdateEndpoint are named, and cleanup makes them."""
        on = self._endpoint_config() if self.journal.made("sagemaker", "UpdateEndpoint") else self.plan.audited_config
        if on == self.plan.audited_config:
            return self._restore(snapshot)
        update = next((i for i, c in enumerate(self.calls) if c.operation == "UpdateEndpoint"), len(self.calls))
        not_made = self._names([c for c in self.calls[update + 1:] if c not in self.journal.calls])
        left = (f"the plan's calls not made: {not_made}" if not_made
                else "the plan's calls after UpdateEndpoint were made")
        if on == self.plan.target_config:
            reason = f"the endpoint is on the plan's config {one_line(on or '')}"
            fix = f"`audit apply --cleanup --yes` makes them{'' if not_made else ' again'}"
        else:
            reason = f"the endpoint is on config {one_line(on or 'unknown')}, neither the audited nor the plan's"
            fix = f"register it by hand as it should be now ({snapshot.describe()} as read before the change)"
        unrecorded = self._record({"step": "restore", "scaling": snapshot.resource_id, "made": [],
                                   "error": f"not restored: {reason}"})
        return (f"the scalable target {one_line(snapshot.resource_id)} is not registered again as read ({reason}: "
                f"the old scaling would not fit it); {left}: {fix}{unrecorded}")

    def _actions_back(self, snapshot: ScalingSnapshot) -> list[str]:
        """After a change that landed: the scheduled actions read before the deregister (which deleted
        them) are put back, but for those the plan puts itself."""
        planned = {str(c.params.get("ScheduledActionName")) for c in self.calls if c.operation == "PutScheduledAction"}
        actions = tuple(a for a in snapshot.scheduled_actions if str(a.get("ScheduledActionName")) not in planned)
        if not actions:
            return []
        made, problem = restore(self.clients, self.region, replace(snapshot, policies=(), scheduled_actions=actions),
                                register=False)
        unrecorded = self._record({"step": "restore", "scaling": snapshot.resource_id,
                                   "made": [c.operation for c in made], "error": problem})
        names = ", ".join(one_line(str(a.get("ScheduledActionName"))) for a in actions)
        if problem is None:
            return [f"scheduled actions {names} put back as read before the change{unrecorded}"]
        return [f"scheduled actions {names} could not be put back ({problem}): put them back by hand as "
                f"`audit history --applied --format json` shows them{unrecorded}"]

    def _restore(self, snapshot: ScalingSnapshot) -> str:
        made, problem = restore(self.clients, self.region, snapshot)
        unrecorded = self._record({"step": "restore", "scaling": snapshot.resource_id,
                                   "made": [c.operation for c in made], "error": problem})
        if problem is None:
            return (f"the scalable target {snapshot.describe()} was registered again as read before the change"
                    f"{snapshot.step_note()}{unrecorded}")
        return (f"the scalable target {snapshot.describe()} could not be registered again ({problem}): "
                "`audit apply --cleanup --yes` tries again, or by hand: "
                f"{by_hand(snapshot, self.region)}, then its policies as `audit history --applied --format json` "
                f"shows them{unrecorded}")

    def _record(self, step: dict[str, Any] | None) -> str:
        """Journal a step of the undo (None: the rollback alarms cleaned); what could not be written is
        said in the message (the undo was made all the same) and the journal is finished after it."""
        try:
            if step is None:
                self.journal.history.mark_cleaned(self.journal.id, self.journal.now())
            else:
                self.journal.record(step)
        except HistoryError as exc:
            return f" (the journal could not record it: {exc})"
        return ""
