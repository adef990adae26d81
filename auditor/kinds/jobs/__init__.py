"""Training, batch transform and processing jobs as one resource kind: discovery, host metrics,
costs, rules, and the request for a job's next run."""
