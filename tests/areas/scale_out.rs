//! Several instances: the Redis hub, legacy sessions on any instance, round
//! robin, nginx, Sentinel and the scaling-out guide run as written.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test scale_out`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../cluster.rs"]
mod cluster;
#[path = "../events_shared.rs"]
mod events_shared;
#[path = "../legacy_cluster.rs"]
mod legacy_cluster;
#[path = "../legacy_round_robin.rs"]
mod legacy_round_robin;
#[path = "../load_balancer.rs"]
mod load_balancer;
#[path = "../scale_out_guide.rs"]
mod scale_out_guide;
#[path = "../sentinel.rs"]
mod sentinel;
