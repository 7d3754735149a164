use super::*;

fn quotas(toml_quotas: Vec<QuotaConfig>, counters: Arc<dyn Counters>, fail: QuotasFail) -> Arc<Quotas> {
    let rules = toml_quotas.iter().map(Rule::new).collect::<Result<_, _>>().unwrap();
    let log = crate::telemetry::logging::discard();
    Arc::new(Quotas { rules, counters, fail, down: AtomicBool::new(false), log })
}

fn quota(name: &str, limit: u64, by: QuotaBy, tools: &[&str]) -> QuotaConfig {
    let tools = tools.iter().map(|t| t.to_string()).collect();
    QuotaConfig { name: name.into(), limit, per_secs: 60, by, tools }
}

/// Counters that cannot be reached.
struct Down;

impl Counters for Down {
    fn count(&self, _: Vec<Slot>) -> BoxFuture<'static, Result<Count, String>> {
        Box::pin(async { Err("connection refused".to_owned()) })
    }
}

fn keys(charge: &Option<Charge>) -> Vec<String> {
    charge.as_ref().map(|c| c.applies.iter().map(|(_, s)| s.key.clone()).collect()).unwrap_or_default()
}

#[test]
fn a_call_is_counted_by_the_quotas_whose_globs_match_it_under_their_key() {
    let q = quotas(
        vec![
            quota("c", 5, QuotaBy::Caller, &[]),
            quota("ct", 5, QuotaBy::CallerTool, &["files__*"]),
            quota("t", 5, QuotaBy::Tool, &["*echo"]),
            quota("u", 5, QuotaBy::Upstream, &[]),
        ],
        Arc::new(memory::MemoryCounters::new(100)),
        QuotasFail::Open,
    );
    assert_eq!(keys(&q.charge("alice", "echo", "")), ["c\nalice", "t\necho"]);
    assert_eq!(keys(&q.charge("bob", "files__read", "files")), ["c\nbob", "ct\nbob\nfiles__read", "u\nfiles"]);
    let only_tools = quotas(vec![quota("t", 5, QuotaBy::Tool, &["x"])], Arc::new(Down), QuotasFail::Open);
    assert!(only_tools.charge("alice", "y", "").is_none());
}

#[tokio::test]
async fn over_a_quota_says_which_and_when_to_retry_in_whole_seconds() {
    let q = quotas(
        vec![quota("two", 2, QuotaBy::Caller, &[])],
        Arc::new(memory::MemoryCounters::new(100)),
        QuotasFail::Open,
    );
    for _ in 0..2 {
        q.charge("alice", "echo", "").unwrap().settle().await.unwrap();
    }
    let over = q.charge("alice", "echo", "").unwrap().settle().await.unwrap_err();
    assert_eq!((over.quota.as_str(), over.unavailable), ("two", false));
    assert!((59..=60).contains(&over.retry_after_secs), "{}", over.retry_after_secs);
    let data = over.error_data();
    assert_eq!(data.code, ErrorCode::SERVER_BUSY);
    let d = data.data.unwrap();
    assert_eq!((d["reason"].as_str(), d["quota"].as_str()), (Some("quota"), Some("two")));
    assert_eq!(d["retryAfterSecs"], over.retry_after_secs);
    // Another caller has its own counter.
    q.charge("bob", "echo", "").unwrap().settle().await.unwrap();
}

#[tokio::test]
async fn unreachable_counters_let_calls_through_or_refuse_them_as_configured() {
    let open = quotas(vec![quota("q", 1, QuotaBy::Caller, &[])], Arc::new(Down), QuotasFail::Open);
    for _ in 0..3 {
        open.charge("alice", "echo", "").unwrap().settle().await.unwrap();
    }
    let closed = quotas(vec![quota("q", 1, QuotaBy::Caller, &[])], Arc::new(Down), QuotasFail::Closed);
    let refused = closed.charge("alice", "echo", "").unwrap().settle().await.unwrap_err();
    assert_eq!(refused, Exceeded { quota: "q".into(), retry_after_secs: 1, unavailable: true });
    assert!(refused.error_data().message.contains("cannot be counted"), "{}", refused.error_data().message);
}
