"""explore stage of the mdm pipeline."""
