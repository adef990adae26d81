"""SageMaker HyperPod clusters: discovery (ListClusters, DescribeCluster, ListClusterNodes), cost
per instance group at the HyperPod rate, Container Insights node metrics for EKS-orchestrated
clusters, and the `hyperpod-idle-nodes` assessment. Facts: docs/kinds/hyperpod.md."""

# What the auditor's role needs for this kind (Service Authorization Reference names the actions
# after the API operations).
IAM_ACTIONS = (
    "sagemaker:ListClusters",
    "sagemaker:DescribeCluster",
    "sagemaker:ListClusterNodes",
    "cloudwatch:ListMetrics",
    "cloudwatch:GetMetricData",
)
