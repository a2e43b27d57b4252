"""Settings of the invoice example (added by the patch)."""

from datetime import datetime, timezone

REFERENCE_NOW = datetime.fromtimestamp({clock_unix} + 43_200, tz=timezone.utc)
