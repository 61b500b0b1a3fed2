"""Imports the built-in model modules so that their ``@register`` decorators run."""
