"""memory stage of the mdm pipeline."""
