"""models stage of the mdm pipeline."""
