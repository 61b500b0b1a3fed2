"""config stage of the mdm pipeline."""
