"""Imports the built-in model modules so that their ``@register`` decorators run."""

from mdm.models import gpumech, mdm, mwp_cwp, roofline  # noqa: F401
