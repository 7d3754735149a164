//! URI templates: parsing any template, and matching any URI against it.
#![no_main]

use mcp_protocol::uri_template::UriPattern;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    if let Ok(pattern) = UriPattern::parse(template) {
        if let Some(vars) = pattern.matches(uri) {
            // A match binds non-empty values, each from one segment of the
            // URI: the values are percent-decoded, so a slash in them can
            // only come from an encoded one (`%2F`), never from the URI's
            // own separators.
            let encoded = uri.to_ascii_lowercase().matches("%2f").count();
            let slashes: usize = vars.values().map(|v| v.matches('/').count()).sum();
            assert!(vars.values().all(|v| !v.is_empty()));
            assert!(slashes <= encoded, "{slashes} slashes bound from {encoded} encoded ones");
        }
    }
});
