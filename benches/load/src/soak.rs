//! The `soak` scenario: a bounded mixed load against one or more instances
//! (paced calls, stable listen streams receiving fan-out, listen churn, and
//! triggers) while the servers' RSS, open files and threads are sampled.
//! Every reply is verified; a failed request or a stable stream that ends
//! early fails the run. The samples go to a CSV file that
//! `benches/soak/report.py` judges and plots.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use mcp_load::{body, rss_kib, verify, Conn, Target};
use serde_json::json;

use crate::cli::{Soak, WATCHED};
use crate::requests::mixed_kind;
use crate::streams::{open_listen, Opening};

#[derive(Default)]
struct Counts {
    ok: AtomicU64,
    failed: AtomicU64,
    notifications: AtomicU64,
    listens_opened: AtomicU64,
    listens_failed: AtomicU64,
    stable_ended: AtomicU64,
    first_error: std::sync::Mutex<Option<String>>,
}

impl Counts {
    fn fail(&self, what: &AtomicU64, e: String) {
        what.fetch_add(1, Ordering::Relaxed);
        self.first_error.lock().unwrap().get_or_insert(e);
    }
    fn get(a: &AtomicU64) -> u64 {
        a.load(Ordering::Relaxed)
    }
}

/// One process's figures at one moment.
struct Sample {
    rss_kib: u64,
    fds: u64,
    threads: u64,
}

fn sample(pid: u32) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let threads = status.lines().find_map(|l| l.strip_prefix("Threads:"))?.trim().parse().ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some(Sample { rss_kib: rss_kib(pid)?, fds, threads })
}

pub(crate) async fn soak(plan: Soak) {
    let targets: Vec<Target> = plan.urls.iter().map(|u| Target::parse(u).expect("a loopback URL")).collect();
    assert!(!targets.is_empty(), "at least one --url");
    let counts = Arc::new(Counts::default());
    let start = Instant::now();
    let epoch_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    let mut csv = std::fs::File::create(&plan.samples).expect("the samples file");
    writeln!(csv, "# start_epoch_ms={epoch_ms} duration_s={} instances={}", plan.duration, plan.pids.len()).unwrap();
    writeln!(csv, "t_s,phase,instance,rss_kib,fds,threads,ok,failed,notifications,listens").unwrap();
    let write_samples = |csv: &mut std::fs::File, phase: &str, counts: &Counts| -> Vec<Option<Sample>> {
        let t = start.elapsed().as_secs_f64();
        let all: Vec<Option<Sample>> = plan.pids.iter().map(|&p| sample(p)).collect();
        for (i, s) in all.iter().enumerate() {
            if let Some(s) = s {
                writeln!(
                    csv,
                    "{t:.1},{phase},{i},{},{},{},{},{},{},{}",
                    s.rss_kib,
                    s.fds,
                    s.threads,
                    Counts::get(&counts.ok),
                    Counts::get(&counts.failed),
                    Counts::get(&counts.notifications),
                    Counts::get(&counts.listens_opened)
                )
                .unwrap();
            }
        }
        csv.flush().ok();
        all
    };
    // The baseline is taken once each instance has everything it keeps open
    // at rest: its Redis publisher connects on the first event it publishes.
    for (i, target) in targets.iter().enumerate() {
        let mut conn = Conn::open(target, None).await.expect("connect");
        let id = 1 << 41 | i as u64;
        let b = body(id, "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
        verify(&conn.call("tools/call", Some("test_trigger_tool_change"), b).await.expect("warm-up"), id)
            .expect("the warm-up trigger succeeds");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let baseline = write_samples(&mut csv, "baseline", &counts);
    let deadline = start + Duration::from_secs(plan.duration);

    let mut tasks = Vec::new();
    // Paced calls, spread over the instances, every reply verified.
    let per_worker = Duration::from_secs_f64(plan.connections as f64 / plan.rate.max(1) as f64);
    for c in 0..plan.connections {
        let (target, counts) = (targets[c % targets.len()].clone(), counts.clone());
        tasks.push(tokio::spawn(async move {
            let mut conn = None;
            let mut tick = tokio::time::interval(per_worker);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut n = 0u64;
            while Instant::now() < deadline {
                tick.tick().await;
                if conn.is_none() {
                    match Conn::open(&target, None).await {
                        Ok(c) => conn = Some(c),
                        Err(e) => {
                            counts.fail(&counts.failed, e);
                            continue;
                        }
                    }
                }
                let id = (c as u64) << 32 | n;
                n += 1;
                let (method, name, b, check) = mixed_kind(id, "echo");
                match conn.as_mut().unwrap().call(&method, name.as_deref(), b).await {
                    Ok(a) => match check(&a, id) {
                        Ok(()) => counts.ok.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            counts.fail(&counts.failed, format!("{method}: {e}"));
                            0
                        }
                    },
                    Err(e) => {
                        counts.fail(&counts.failed, format!("{method}: {e}"));
                        conn = None;
                        0
                    }
                };
            }
        }));
    }
    // Stable listeners on every instance: they must stay open the whole run.
    let filter = Opening::Listen(json!({"toolsListChanged": true, "resourceSubscriptions": [WATCHED]}));
    let mut stable = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        for k in 0..plan.listeners {
            let id = 1_000_000 + (i * plan.listeners + k) as u64;
            match open_listen(target, None, id, &filter).await {
                Ok((conn, mut stream)) => {
                    counts.listens_opened.fetch_add(1, Ordering::Relaxed);
                    let counts = counts.clone();
                    stable.push(tokio::spawn(async move {
                        let _conn = conn;
                        while let Some(Ok(f)) = stream.frame().await {
                            if let Some(d) = f.data_ref() {
                                let hits = d.windows(9).filter(|w| *w == b"\"method\":").count();
                                counts.notifications.fetch_add(hits as u64, Ordering::Relaxed);
                            }
                        }
                        // Held streams are aborted at the end, never ended by the server.
                        counts.fail(&counts.stable_ended, format!("stable listener {id} ended"));
                    }));
                }
                Err(e) => counts.fail(&counts.listens_failed, e),
            }
        }
    }
    // Listen churn: open, take the acknowledgement, hold a little, close.
    for w in 0..plan.churn {
        let (targets, counts) = (targets.clone(), counts.clone());
        let filter = filter.clone();
        tasks.push(tokio::spawn(async move {
            let mut k = w as u64;
            while Instant::now() < deadline {
                match open_listen(&targets[k as usize % targets.len()], None, k, &filter).await {
                    Ok(pair) => {
                        counts.listens_opened.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(k * 7919 % 400)).await;
                        drop(pair);
                    }
                    Err(e) => counts.fail(&counts.listens_failed, e),
                }
                k += plan.churn as u64;
            }
        }));
    }
    // Triggers: a resource update (and every tenth a tool list change) on
    // alternating instances; the stable listeners everywhere get them.
    {
        let (targets, counts, every) = (targets.clone(), counts.clone(), plan.trigger_ms);
        tasks.push(tokio::spawn(async move {
            let mut conns: Vec<Option<Conn>> = targets.iter().map(|_| None).collect();
            let mut tick = tokio::time::interval(Duration::from_millis(every.max(1)));
            let mut n = 0u64;
            while Instant::now() < deadline {
                tick.tick().await;
                let i = n as usize % targets.len();
                let (tool, args) = if n % 10 == 9 {
                    ("test_trigger_tool_change", json!({}))
                } else {
                    ("test_trigger_resource_update", json!({"uri": WATCHED}))
                };
                let id = 1 << 40 | n;
                n += 1;
                if conns[i].is_none() {
                    conns[i] = Conn::open(&targets[i], None).await.ok();
                }
                let Some(conn) = conns[i].as_mut() else {
                    counts.fail(&counts.failed, "trigger: cannot connect".into());
                    continue;
                };
                let b = body(id, "tools/call", json!({"name": tool, "arguments": args}));
                match conn.call("tools/call", Some(tool), b).await {
                    Ok(a) => match verify(&a, id) {
                        Ok(_) => {
                            counts.ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => counts.fail(&counts.failed, format!("trigger: {e}")),
                    },
                    Err(e) => {
                        counts.fail(&counts.failed, format!("trigger: {e}"));
                        conns[i] = None;
                    }
                }
            }
        }));
    }

    // Samples every `sample_secs` until the deadline.
    while Instant::now() < deadline {
        let next = Instant::now() + Duration::from_secs(plan.sample_secs.max(1));
        tokio::time::sleep_until(next.min(deadline).into()).await;
        let all = write_samples(&mut csv, "load", &counts);
        let rss: Vec<String> =
            all.iter().map(|s| s.as_ref().map_or("gone".into(), |s| format!("{}", s.rss_kib / 1024))).collect();
        println!(
            "t={:>5.0}s ok={} failed={} notifications={} listens={} RSS MiB={}",
            start.elapsed().as_secs_f64(),
            Counts::get(&counts.ok),
            Counts::get(&counts.failed),
            Counts::get(&counts.notifications),
            Counts::get(&counts.listens_opened),
            rss.join("/")
        );
    }
    for t in tasks {
        t.await.unwrap();
    }
    // The held streams end here (dropping each closes its connection).
    for t in &stable {
        t.abort();
    }
    for t in stable {
        let _ = t.await;
    }

    // After the load: open files must come back to the baseline.
    let settle_deadline = Instant::now() + Duration::from_secs(plan.settle);
    let back = |all: &[Option<Sample>]| {
        all.iter().zip(&baseline).all(|(now, base)| match (now, base) {
            (Some(n), Some(b)) => n.fds <= b.fds,
            _ => false,
        })
    };
    let mut after = write_samples(&mut csv, "after", &counts);
    while !back(&after) && Instant::now() < settle_deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        after = write_samples(&mut csv, "after", &counts);
    }
    let fds = |all: &[Option<Sample>]| -> Vec<String> {
        all.iter().map(|s| s.as_ref().map_or("gone".into(), |s| s.fds.to_string())).collect()
    };
    println!(
        "soak: seconds={} requests_ok={} requests_failed={} notifications={} listens_opened={} listens_failed={} \
         stable_ended={} fds_baseline={} fds_after={}",
        plan.duration,
        Counts::get(&counts.ok),
        Counts::get(&counts.failed),
        Counts::get(&counts.notifications),
        Counts::get(&counts.listens_opened),
        Counts::get(&counts.listens_failed),
        Counts::get(&counts.stable_ended),
        fds(&baseline).join("/"),
        fds(&after).join("/")
    );
    if let Some(e) = counts.first_error.lock().unwrap().take() {
        println!("first error: {e}");
    }
    let failed = Counts::get(&counts.failed) + Counts::get(&counts.listens_failed) + Counts::get(&counts.stable_ended);
    if failed > 0 || !back(&after) {
        std::process::exit(1);
    }
}
