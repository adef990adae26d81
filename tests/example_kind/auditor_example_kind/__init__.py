"""An example resource kind that lives outside the auditor: SageMaker models that no endpoint
configuration and no inference component names (ListModels, DescribeModel, ListEndpointConfigs,
DescribeEndpointConfig, ListInferenceComponents, DescribeInferenceComponent, ListTags). It is
registered by its distribution's entry point (`sagemaker_auditor.kinds`: models), never by a file
of `auditor/`."""

# What the auditor's role needs for this kind. A plug-in kind's actions are outside the shipped
# deploy/iam-policy.json: its distribution documents them, and `audit_actions()` lists them.
IAM_ACTIONS = (
    "sagemaker:ListModels",
    "sagemaker:DescribeModel",
    "sagemaker:ListEndpointConfigs",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:ListInferenceComponents",
    "sagemaker:DescribeInferenceComponent",
    "sagemaker:ListTags",
)
