"""Trace sources: OpenTelemetry spans read as ADK sessions (see docs/production.md, "Traces")."""
