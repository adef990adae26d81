"""The write path: `audit apply ID` changes a resource as a plan says, guarded.

Everything else in the auditor only reads. Here a stored plan's change (ApiCalls, in order) is made
with apply's own credentials ([apply] profile or role_arn, deploy/iam-apply-policy.json), after
every guard (auditor.act.guards) has passed, journaled before the first call and after each
(auditor.act.journal, auditor.act.execute); the endpoint is watched until it is InService again on
the new config (or rolled back); what a failure removed is put back (auditor.act.restore) and what it
left is named or cleaned up (auditor.act.cleanup). The next audit run checks that the endpoint now
has the new shape (auditor.act.verify).
"""

from __future__ import annotations

# The write calls a plan's change may make, as (botocore service, operation): the change builders'
# operations must be a subset, and deploy/iam-apply-policy.json allows exactly these and APPLY_READS.
APPLY_OPERATIONS: frozenset[tuple[str, str]] = frozenset({
    ("sagemaker", "CreateEndpointConfig"),
    ("sagemaker", "UpdateEndpoint"),
    ("sagemaker", "DeleteEndpoint"),  # a delete plan (its endpoint config is kept, to re-create it)
    ("application-autoscaling", "RegisterScalableTarget"),
    ("application-autoscaling", "DeregisterScalableTarget"),  # before an autoscaled variant's resize
    ("application-autoscaling", "PutScalingPolicy"),
    ("application-autoscaling", "PutScheduledAction"),  # off-hours for inference components
    ("cloudwatch", "PutMetricAlarm"),
    ("cloudwatch", "DeleteAlarms"),  # only the rollback alarms an apply made (auditor.act.cleanup)
    ("scheduler", "CreateSchedule"),  # off-hours for a single-model endpoint
    ("sagemaker", "StopNotebookInstance"),  # a notebook left running (its volume is kept)
    ("sagemaker", "DeleteApp"),  # an idle Studio app (the space's storage is kept)
    ("sagemaker", "BatchDeleteClusterNodes"),  # a HyperPod group's idle nodes, by id
    ("sagemaker", "UpdateDomain"),  # a Studio domain's idle shutdown turned on
})
# What apply itself reads: who it is, the resource's state and tags (the guards; auditor.act.targets),
# the alarms a blue/green deployment rolls back on, the resource while it waits, and what the calls
# created, read back (auditor.act.readback).
APPLY_READS: frozenset[tuple[str, str]] = frozenset({
    ("sts", "GetCallerIdentity"),
    ("sagemaker", "DescribeEndpoint"),
    ("sagemaker", "DescribeEndpointConfig"),  # the config a copy is made of: its ARN, for its tags
    ("sagemaker", "ListTags"),
    ("sagemaker", "DescribeNotebookInstance"),
    ("sagemaker", "DescribeApp"),
    ("sagemaker", "DescribeDomain"),  # a domain's status and settings, before and after UpdateDomain
    ("sagemaker", "DescribeCluster"),
    ("sagemaker", "ListClusterNodes"),  # the nodes a plan deletes must all still exist
    ("cloudwatch", "DescribeAlarms"),
    ("scheduler", "GetSchedule"),
    ("application-autoscaling", "DescribeScheduledActions"),
    ("application-autoscaling", "DescribeScalingPolicies"),
    # the variants' targets, as the plan saw them (drift), and as read before a deregister (restore)
    ("application-autoscaling", "DescribeScalableTargets"),
    ("sagemaker", "ListInferenceComponents"),  # the components a plan's call names are the endpoint's
    ("cloudwatch", "GetMetricData"),  # a destructive plan's fresh evidence (auditor.act.evidence)
    ("cloudwatch", "ListMetrics"),  # a HyperPod node's series (Container Insights names them by NodeName)
})
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
