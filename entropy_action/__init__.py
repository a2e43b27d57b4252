"""entropy-gate: pin entropy sources, re-run properties on a second host, classify the patch.

This module is imported inside the test process (the in-process plugin lives in this
package), so it must stay free of imports beyond the standard library.
"""

__version__ = "1.0.0"
