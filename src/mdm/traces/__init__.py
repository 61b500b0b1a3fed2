"""traces stage of the mdm pipeline."""
