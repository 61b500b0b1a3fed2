"""cli stage of the mdm pipeline."""
