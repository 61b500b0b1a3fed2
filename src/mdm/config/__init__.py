"""config stage of the mdm pipeline: typed GPU configurations, presets, Accel-Sim import."""

from mdm.config.accelsim import CacheSpec, import_accelsim
from mdm.config.gpu import GPUConfig
from mdm.config.load import apply_settings, list_presets, load_gpu

__all__ = [
    "CacheSpec",
    "GPUConfig",
    "apply_settings",
    "import_accelsim",
    "list_presets",
    "load_gpu",
]
