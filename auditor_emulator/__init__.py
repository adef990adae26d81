"""The local AWS emulator: a moto server over HTTP, seeded with synthetic SageMaker fleets, with
what moto lacks (CloudWatch's published metrics, AWS's refusals on writes, faults) added. `audit
demo`, `audit emulator`, the tests and the benchmark use it. It ships in the same distribution as
the auditor (installed with the `demo` extra, which brings moto) and imports `auditor`; the
auditor never imports it."""
