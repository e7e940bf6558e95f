"""Dialog systems under interactive evaluation: the contract (`contract`, `signing`), Quorum's
client for it (`client`), the conformance check (`check`) and a reference system (`reference`).
See docs/system-contract.md. Nothing here imports Django models: the services call these."""
