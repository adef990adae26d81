"""The write path: `audit apply ID` changes a resource as a plan says, guarded.

Everything else in the auditor only reads. Here a stored plan's change (ApiCalls, in order) is made
with apply's own credentials ([apply] profile or role_arn, deploy/iam-apply-policy.json), after
every guard (auditor.act.guards) has passed, journaled before the first call and after each
(auditor.act.journal, auditor.act.execute); the endpoint is watched until it is InService again on
the new config (or rolled back); what a failure removed is put back (auditor.act.restore) and what it
left is named or cleaned up (auditor.act.cleanup). The next audit run checks that the endpoint now
has the new shape (auditor.act.verify).

What differs per resource type is its kind's (auditor/kinds/<kind>/target.py, binding.py,
evidence.py, verify.py), found through auditor.kinds.registry; the pieces they are made of are the
write core's (auditor.write). Nothing here names a kind.
"""

from __future__ import annotations

from auditor.kinds.registry import BINDINGS, EVIDENCE, TARGETS

# The write calls a plan's change may make, as (botocore service, operation): each kind's call
# bindings' operations (auditor/kinds/<kind>/binding.py), and the one apply makes of its own;
# deploy/iam-apply-policy.json allows exactly these and APPLY_READS.
APPLY_OPERATIONS: frozenset[tuple[str, str]] = frozenset({
    ("cloudwatch", "DeleteAlarms"),  # only the rollback alarms an apply made (auditor.act.cleanup)
}).union(*(binding.operations for binding in BINDINGS.values()))
# What apply reads: each kind's targets (the resource's state before and while it waits) and
# fresh-evidence checks, and the engine's own: who it is, the resource's tags (the guards), the
# alarms a blue/green deployment rolls back on, and what the calls created, read back
# (auditor.act.readback).
APPLY_READS: frozenset[tuple[str, str]] = frozenset({
    ("sts", "GetCallerIdentity"),
    ("sagemaker", "ListTags"),
    ("sagemaker", "DescribeEndpoint"),  # a deployment still going (auditor.act.execute)
    ("sagemaker", "DescribeEndpointConfig"),  # the config a copy is made of: its ARN, for its tags
    ("cloudwatch", "DescribeAlarms"),
    ("scheduler", "GetSchedule"),
    ("application-autoscaling", "DescribeScheduledActions"),
    ("application-autoscaling", "DescribeScalingPolicies"),
    ("application-autoscaling", "DescribeScalableTargets"),  # as read before a deregister (restore)
}).union(*(target.reads for target in TARGETS.values()), *(check.reads for check in EVIDENCE.values()))
# A schedule runs its target as a role EventBridge Scheduler assumes: creating one passes that role.
APPLY_PASS_ROLE = "iam:PassRole"
# Actions IAM also checks when apply's calls run, though apply calls none of them itself (each the
# Service Authorization Reference's "dependent action" or a check the service documents):
APPLY_AUTHORIZED_ALSO: frozenset[str] = frozenset({
    "sagemaker:AddTags",  # CreateEndpointConfig with Tags (tag on create, sagemaker:TaggingAction)
    # Application Auto Scaling checks the caller may change a variant's count, and put and delete
    # alarms, before it registers or deregisters a SageMaker variant or puts a policy on it.
    "sagemaker:UpdateEndpointWeightsAndCapacities",
    "iam:CreateServiceLinkedRole",  # its SageMaker role, the first time any variant is registered
    "eks:DescribeCluster",  # BatchDeleteClusterNodes on a HyperPod cluster that EKS orchestrates
    # PutMetricAlarm with Tags (every alarm apply puts carries auditor:plan): botocore's model for
    # PutMetricAlarm.Tags, "you must be signed on with both ... PutMetricAlarm and ... TagResource".
    "cloudwatch:TagResource",
})


def apply_policy_actions() -> set[str]:
    """The IAM actions apply needs: its writes, its reads, iam:PassRole (for schedules) and what
    IAM checks besides them (APPLY_AUTHORIZED_ALSO)."""
    return ({f"{service}:{operation}" for service, operation in APPLY_OPERATIONS | APPLY_READS}
            | {APPLY_PASS_ROLE} | APPLY_AUTHORIZED_ALSO)
