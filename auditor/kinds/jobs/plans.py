"""What a job's plans rest on (recommend/plans.py builds them): the job's shape, each option's
risk from the job's own costs and metrics (kinds/jobs/risk) and the change, its next run's request
(kinds/jobs/change)."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.change import job_change
from auditor.kinds.jobs.models import JobsSection, ProcessingCost, TrainingCost, TransformCost
from auditor.kinds.jobs.risk import JobCost, job_risk
from auditor.models import Change, Finding, Plan, PlanOption, Risk, Window
from auditor.recommend.plans import PlanSubject, SubjectOf

# Each job cost's resource type, as its findings and plans name it.
JOB_TYPES = {TrainingCost: "training-job", TransformCost: "transform-job", ProcessingCost: "processing-job"}


def plan_subjects(section: JobsSection, catalog: Catalog, config: AuditConfig, _window: Window | None) -> SubjectOf:
    """The job each job finding's plan is for (None for a job not in the section: the rule's details
    then state the risk and the change)."""
    costs: tuple[JobCost, ...] = (*section.training, *section.transform, *section.processing)
    by_key = {(c.job.account_id, c.job.region, JOB_TYPES[type(c)], c.job.name): c for c in costs}

    def subject_of(finding: Finding) -> PlanSubject | None:
        ref = finding.resource
        cost = by_key.get((ref.account_id, ref.region, ref.type, ref.name))
        if cost is None:
            return None
        return JobSubject(instance_type=cost.job.instance_type, instance_count=cost.job.instance_count,
                          cost=cost, catalog=catalog, config=config)

    return subject_of


@dataclass(frozen=True, kw_only=True)
class JobSubject(PlanSubject):
    cost: JobCost
    catalog: Catalog
    config: AuditConfig

    def risk(self, option: PlanOption) -> Risk | None:
        return job_risk(option, self.cost, self.catalog, self.config)

    def change(self, plan: Plan) -> Change | None:
        return super().change(plan) or job_change(plan, self.cost.job)
