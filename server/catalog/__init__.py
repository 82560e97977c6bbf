"""The warm catalog: scanning, the snapshot cache and the watcher."""
