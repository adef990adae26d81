"""The write primitives every kind's apply target is made of: the Target strategy a kind
implements for each resource type it changes (read the resource now, say what changed since the
audit, wait for the change to end), the resource as read (Observed), what a wait polls (Waiting),
the poll with its back-off, and the reads that refuse when AWS does not answer.

A kind's targets live in its package (auditor/kinds/<kind>/target.py) and are listed on its
ResourceKind (`targets`, by resource type); apply finds them through auditor.kinds.registry.
Below the kinds: nothing here imports a kind, apply (auditor.act) or the tasks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import botocore.exceptions

from auditor.collect.session import THROTTLING_CODES, AwsClients, describe_client_error
from auditor.config import ApplyConfig
from auditor.text import one_line
from auditor.write.plan import ApplyFailed, ApplyRefused, PlanToApply

FIRST_POLL_SECONDS = 0.5
MAX_POLL_SECONDS = 30.0  # SageMaker's own waiters poll every 30 s
ERRORS = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
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

    who: str  # the resource as the messages name it (Target.named(plan))
    operation: str
    read: Callable[[], dict[str, Any] | None]  # None: the resource is gone
    status_key: str
    done: str | None  # None: only the resource's being gone is done (gone_is_done)
    in_progress: frozenset[str]
    gone_is_done: bool = False
    at_deadline: str = "the next audit run checks it"  # said when the wait runs out


class Target(ABC):
    """One resource type's strategy (a kind's `targets` map a plan's resource_type to one)."""

    noun = "resource"
    # The statuses a change of this type is still going in (a deployment, an update): nothing else
    # is changed on the resource meanwhile.
    in_progress: frozenset[str] = frozenset()
    # The calls it reads the resource with (`observe`, `settle`), as (botocore service, operation):
    # in apply's IAM policy (auditor.act.APPLY_READS).
    reads: frozenset[tuple[str, str]] = frozenset()

    def named(self, plan: PlanToApply) -> str:
        """The plan's resource as the messages name it: its noun and its name."""
        return f"{self.noun} {one_line(plan.resource.name)}"

    def read(self, plan: PlanToApply, operation: str, call: Callable[[], Any], service: str = "sagemaker") -> Any:
        """`call`'s answer; ApplyRefused naming the resource and the call when AWS does not give it."""
        try:
            return call()
        except ERRORS as exc:
            problem = describe_client_error(exc, service, operation, plan.resource.region)
            raise ApplyRefused(f"{self.named(plan)}: {problem}") from None

    def described(self, plan: PlanToApply, operation: str, call: Callable[[], Any]) -> dict[str, Any]:
        """A SageMaker Describe call's answer, as a dict (`read`)."""
        return dict(self.read(plan, operation, call))

    def opt_in_patterns(self, config: ApplyConfig) -> tuple[tuple[str, ...], str]:
        """The name patterns that opt a resource of this type in besides the tag, and the settings
        they come from, as a refusal names them."""
        return config.resources, "[apply] resources"

    def plan_problem(self, plan: PlanToApply) -> str | None:
        """What the plan lacks for this type (read from the plan alone), or None."""
        return None

    def opt_in_resources(self, plan: PlanToApply, observed: Observed) -> list[tuple[str, str, str]]:
        """The resources that must each be opted in (by their tag, or their name matching
        `opt_in_patterns`), as (how a refusal names it, its ARN for ListTags, its name): the plan's
        resource itself."""
        return [(self.named(plan), observed.arn, plan.resource.name)]

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
        return f"{self.named(plan)} is {one_line(observed.status)}"

    @abstractmethod
    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        """After the calls up to the one the others wait for (UpdateEndpoint, CreateEndpoint; all of
        them when none is made): (outcome, message), outcome applied | rolled-back | failed | timed-out."""

    def settle_after(self, clients: AwsClients, plan: PlanToApply, wait_minutes: float,
                     sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str] | None:
        """After the calls made once `settle` said applied: a second wait, (outcome, message); None
        when there is nothing more to wait for (what they created is read back instead)."""
        return None


def gone(exc: Exception) -> bool:
    """AWS's answer for a resource that is not there."""
    if not isinstance(exc, botocore.exceptions.ClientError):
        return False
    error = exc.response.get("Error", {})
    return str(error.get("Code", "")).startswith(_NOT_FOUND[0]) or (
        error.get("Code") == _NOT_FOUND[1] and "Could not find" in str(error.get("Message", "")))


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
    who = waiting.who
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
        except ERRORS as exc:
            if waiting.gone_is_done and gone(exc):
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
                problem = describe_client_error(exc, "sagemaker", waiting.operation, plan.resource.region)
                raise ApplyFailed(said(f"plan {plan.id}: the calls were made, but {problem}")) from None
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
