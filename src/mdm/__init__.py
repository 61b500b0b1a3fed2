"""mdm: analytical GPU performance prediction with the GPU Memory Divergence Model.

Pipeline (paper 001, Fig. 1): traces -> profile -> memory (cache simulation) ->
models -> explore/validate -> report. One sub-package per stage.
"""

from mdm.errors import ConfigError, MdmError, TraceFormatError

__version__ = "0.1.0"
__all__ = ["ConfigError", "MdmError", "TraceFormatError", "__version__"]
