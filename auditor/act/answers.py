"""The answers a change's later calls refer to (auditor.models: answer references, such as a
step-scaling policy's PolicyARN in the AlarmActions of the alarm that triggers it).

A call apply made has its answer; one that landed (an error, but AWS shows it done) or was reused (a
retry found it) has none: the field is read back from AWS (DescribeScalingPolicies for a PolicyARN,
the Describe call of what a create made for its ARN). A reference that cannot be answered fails the
apply before the call that carries it (the call is never made with a placeholder in it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import botocore.exceptions

from auditor.collect.session import AwsClients, describe_client_error
from auditor.models import NAME_PARAMS, AnswerReference, ApiCall
from auditor.text import one_line

Reader = Callable[[Any, dict[str, Any]], dict[str, Any]]  # (the service's client, the call's params) -> what AWS shows


def _scaling_policy(api: Any, params: dict[str, Any]) -> dict[str, Any]:
    found = api.describe_scaling_policies(
        ServiceNamespace=params["ServiceNamespace"], ResourceId=params["ResourceId"],
        ScalableDimension=params["ScalableDimension"], PolicyNames=[params["PolicyName"]])
    return next((dict(p) for p in found.get("ScalingPolicies", []) if p.get("PolicyName") == params["PolicyName"]),
                {})


# (service, operation) -> (the read, how it is named, what AWS shows of the thing the call made).
READ_BACK: dict[tuple[str, str], tuple[str, Reader]] = {
    ("application-autoscaling", "PutScalingPolicy"): ("DescribeScalingPolicies", _scaling_policy),
    ("sagemaker", "CreateEndpointConfig"): ("DescribeEndpointConfig", lambda api, p: dict(
        api.describe_endpoint_config(EndpointConfigName=p["EndpointConfigName"]))),
    ("sagemaker", "CreateEndpoint"): ("DescribeEndpoint", lambda api, p: dict(
        api.describe_endpoint(EndpointName=p["EndpointName"]))),
    ("sagemaker", "CreateInferenceComponent"): ("DescribeInferenceComponent", lambda api, p: dict(
        api.describe_inference_component(InferenceComponentName=p["InferenceComponentName"]))),
}


def describe(reference: AnswerReference) -> str:
    """The reference as the messages say it: "the PolicyARN of PutScalingPolicy x"."""
    return f"the {one_line(reference.field)} of {one_line(reference.operation)} {one_line(reference.name)}"


def referred_call(calls: list[ApiCall] | tuple[ApiCall, ...], reference: AnswerReference) -> int | None:
    """The index of the call among `calls` the reference names (its operation, and its name
    parameter equal to the reference's name); None when none does."""
    key = NAME_PARAMS.get(reference.operation)
    return next((i for i, c in enumerate(calls)
                 if c.operation == reference.operation and key and c.params.get(key) == reference.name), None)


def answered(clients: AwsClients, region: str, call: ApiCall, answer: dict[str, Any],
             reference: AnswerReference) -> tuple[Any, str | None]:
    """(the value, None), or (None, why not): from the call's answer, else read back from AWS."""
    if answer.get(reference.field) not in (None, ""):
        return answer[reference.field], None
    reader = READ_BACK.get((call.service, call.operation))
    if reader is None:
        return None, f"the answer has no {one_line(reference.field)} and apply cannot read it back"
    operation, read = reader
    try:
        shown = read(clients.client(call.service, region), call.params)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        return None, describe_client_error(exc, call.service, operation, region)
    value = shown.get(reference.field)
    if value in (None, ""):
        return None, f"{operation} shows no {one_line(reference.field)}"
    return value, None
