"""profile stage of the mdm pipeline."""
