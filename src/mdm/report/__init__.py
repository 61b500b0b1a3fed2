"""report stage of the mdm pipeline."""
