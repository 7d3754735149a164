//! The configuration: the shipped files load, bad values are refused, the
//! environment overrides.

use super::*;

#[test]
fn default_toml_equals_default() {
    let text = include_str!("../../../config/default.toml");
    assert_eq!(Config::from_toml(text).unwrap(), Config::default());
}

#[test]
fn the_cluster_example_loads() {
    let c = Config::from_toml(include_str!("../../../config/cluster.toml")).unwrap();
    assert_eq!(c.hub.backend, HubBackend::Redis);
}

#[test]
fn the_auth_example_loads() {
    let c = Config::from_toml(include_str!("../../../config/auth.toml")).unwrap();
    assert_eq!(c.auth.mode, AuthMode::Oauth);
    assert_eq!(c.canonical_resource(), "https://mcp.example.com/mcp");
}

#[test]
fn rejects_unknown_keys_and_bad_values() {
    assert!(Config::from_toml("[http]\nbindd = \"x\"").is_err());
    assert!(Config::from_toml("[log]\nformat = \"xml\"").is_err());
    assert!(Config::from_toml("[server]\nversions = [\"1999-01-01\"]").is_err());
    // An initialize-era server only (what old clients and a client's fallback are tested with).
    assert!(Config::from_toml("[server]\nversions = [\"2025-11-25\"]").is_ok());
    assert!(Config::from_toml("[http]\nmax_body_bytes = 0").is_err());
}

#[test]
fn a_wrong_word_is_refused_naming_the_setting_and_the_valid_ones() {
    for (toml, setting, words) in [
        ("[hub]\nbackend = \"redsi\"", "hub.backend", r#""memory", "redis""#),
        ("[auth]\nmode = \"OAuth\"", "auth.mode", r#""none", "oauth", "api_key""#),
        ("[log]\nformat = \"xml\"", "log.format", r#""term", "json""#),
        ("[cache]\nscope = \"shared\"", "cache.scope", r#""public", "private""#),
        ("[tasks]\nstore = \"disk\"", "tasks.store", r#""", "memory", "redis""#),
        ("[legacy]\nstore = \"disk\"", "legacy.store", r#""", "memory", "redis""#),
        ("[audit]\nwhen_full = \"wait\"", "audit.when_full", r#""block", "drop""#),
        ("[policy]\nmode = \"lax\"", "policy.mode", r#""enforce", "shadow""#),
        ("quotas_fail = \"ajar\"", "quotas_fail", r#""open", "closed""#),
        ("[[quotas]]\nby = \"moon\"", "quotas.by", r#""caller", "caller+tool", "tool", "upstream""#),
    ] {
        let e = Config::from_toml(toml).unwrap_err().0;
        assert!(e.contains(&format!("{setting} must be one of {words}, not ")), "{toml}: {e}");
    }
    // A value of another type names the setting too.
    let e = Config::from_toml("[auth]\nmode = 1").unwrap_err().0;
    assert!(e.contains(r#"expected auth.mode as one of "none", "oauth", "api_key""#), "{e}");
    let e = Config::default().apply_env([("ACTIX_MCP_HUB_BACKEND".to_string(), "redsi".to_string())]);
    assert_eq!(e.unwrap_err().0, r#"hub.backend must be one of "memory", "redis", not "redsi""#);
}

#[test]
fn env_overrides() {
    let mut c = Config::default();
    c.apply_env([("ACTIX_MCP_BIND".to_string(), "127.0.0.1:0".to_string())]).unwrap();
    assert_eq!(c.http.bind, "127.0.0.1:0");
    assert!(c.apply_env([("ACTIX_MCP_WORKERS".to_string(), "many".to_string())]).is_err());
    let vars = [
        ("ACTIX_MCP_AUTH_MODE", "oauth"),
        ("ACTIX_MCP_AUTH_ISSUERS", "http://127.0.0.1:1, https://id.example"),
        ("ACTIX_MCP_PUBLIC_URL", "http://127.0.0.1:8080/mcp"),
    ];
    c.apply_env(vars.map(|(k, v)| (k.to_string(), v.to_string()))).unwrap();
    assert_eq!(c.auth.issuers, ["http://127.0.0.1:1", "https://id.example"]);
    let mut g = Config::default();
    let governance = [
        ("ACTIX_MCP_AUDIT_FILE", "/var/log/a.jsonl"),
        ("ACTIX_MCP_POLICY_FILE", "p.cedar"),
        ("ACTIX_MCP_POLICY_MODE", "shadow"),
    ];
    if cfg!(feature = "policy") {
        g.apply_env(governance.map(|(k, v)| (k.to_string(), v.to_string()))).unwrap();
        assert_eq!(
            (g.audit.file.as_str(), g.policy.file.as_str(), g.policy.mode),
            ("/var/log/a.jsonl", "p.cedar", PolicyMode::Shadow)
        );
    }
    assert!(g.apply_env([("ACTIX_MCP_POLICY_MODE".to_string(), "lax".to_string())]).is_err());
}

#[test]
fn auth_off_loopback_needs_tls_or_a_proxy() {
    let oauth = "[auth]\nmode = \"oauth\"\nissuers = [\"https://id.example.com\"]\n";
    // OAuth needs the URL clients reach the server at.
    assert!(Config::from_toml(oauth).unwrap_err().0.contains("http.public_url"));
    let on = format!("{oauth}resource = \"https://mcp.example.com/mcp\"\n");
    assert!(Config::from_toml(&on).is_ok());
    let public = format!("{on}[http]\nbind = \"0.0.0.0:8080\"\n");
    assert!(Config::from_toml(&public).unwrap_err().0.contains("http.tls"));
    assert!(Config::from_toml(&format!("{public}behind_tls_proxy = true\n")).is_ok());
    let tls = format!("{public}[http.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n");
    assert_eq!(Config::from_toml(&tls).unwrap().canonical_resource(), "https://mcp.example.com/mcp");
    let mut derived = Config::default();
    derived.http.bind = "0.0.0.0:8080".into();
    derived.http.tls.cert = "c.pem".into();
    derived.http.tls.key = "k.pem".into();
    assert_eq!(derived.canonical_resource(), "https://0.0.0.0:8080/mcp");
    assert!(Config::from_toml("[http.tls]\ncert = \"c.pem\"\nkey = \"\"\n").is_err());
}

#[test]
fn mrtr_keys_rotate_and_exclude_mrtr_key() {
    let a = "c2hhcmVkLWtleS1mb3ItYWxsLWluc3RhbmNlcy0xMjM0NTY3ODk=";
    let b = "YW5vdGhlci1rZXktZm9yLWFsbC1pbnN0YW5jZXMtOTg3NjU0MzIx";
    let c = Config::from_toml(&format!("[mrtr]\nkeys = [\"{b}\", \"{a}\"]\n")).unwrap();
    assert_eq!(c.mrtr.decoded_keys().unwrap().len(), 2);
    let one = Config::from_toml(&format!("[mrtr]\nkey = \"{a}\"\n")).unwrap();
    assert_eq!(one.mrtr.decoded_keys().unwrap().len(), 1, "mrtr.key is a list of one");
    for (toml, says) in [
        (format!("[mrtr]\nkey = \"{a}\"\nkeys = [\"{b}\"]\n"), "mrtr.key and mrtr.keys are both set"),
        (format!("[mrtr]\nkeys = [\"{a}\", \"c2hvcnQ=\"]\n"), "mrtr.keys[1] must decode to at least 32 bytes"),
        (format!("[mrtr]\nkeys = [\"{a}\", \"{a}\"]\n"), "mrtr.keys[1] is listed twice"),
    ] {
        let e = Config::from_toml(&toml).unwrap_err().0;
        assert!(e.contains(says), "{e}");
    }
    let mut env = Config::default();
    env.apply_env([("ACTIX_MCP_MRTR_KEYS".to_string(), format!("{b}, {a}"))]).unwrap();
    assert_eq!(env.mrtr.keys, [b, a]);
}

#[cfg(feature = "redis")]
#[test]
fn a_bad_redis_url_is_named_by_its_key() {
    let hub = Config::from_toml("[hub]\nbackend = \"redis\"\nredis_url = \"http://x\"\n").unwrap_err().0;
    assert!(hub.contains("hub.redis_url \"http://x\""), "{hub}");
    let redis = Config::from_toml("[hub]\nbackend = \"redis\"\n[redis]\nurl = \"http://y\"\n").unwrap_err().0;
    assert!(redis.contains("redis.url \"http://y\""), "{redis}");
}

#[test]
fn relative_files_of_a_config_file_are_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let etc = dir.path().join("etc");
    std::fs::create_dir(&etc).unwrap();
    let file = etc.join("actix-mcp.toml");
    let text = "[audit]\nfile = \"audit.jsonl\"\n[gateway]\npins = \"../state/pins.json\"\n\
                [policy]\nschema = \"/opt/policy.cedarschema\"\n[fs]\nroot = \"served\"\n";
    std::fs::write(&file, text).unwrap();
    // Read from elsewhere: the tests run in the crate's directory.
    assert_ne!(std::env::current_dir().unwrap(), etc);
    let c = Config::from_file(&file).unwrap();
    assert_eq!(std::path::Path::new(&c.audit.file), etc.join("audit.jsonl"));
    assert_eq!(std::path::Path::new(&c.gateway.pins), etc.join("../state/pins.json"));
    assert_eq!(c.policy.schema, "/opt/policy.cedarschema", "an absolute path stays");
    assert_eq!(c.policy.file, "", "an unset path stays unset");
    assert_eq!(c.fs.root, "served", "every other path is relative to the working directory");
    // Text alone, and a variable over the file, are relative to the working directory.
    assert_eq!(Config::from_toml(text).unwrap().audit.file, "audit.jsonl");
    let mut c = c;
    c.apply_env([("ACTIX_MCP_AUDIT_FILE".to_string(), "here.jsonl".to_string())]).unwrap();
    assert_eq!(c.audit.file, "here.jsonl");
}
