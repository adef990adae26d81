"""One package per resource kind, each behind the seam of issue 18 (discovery, cost, metric
queries, assessment, report section, IAM actions)."""
