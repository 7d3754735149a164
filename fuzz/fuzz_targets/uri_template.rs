//! URI templates: parsing any template, and matching any URI against it.
#![no_main]

use actix_mcp::catalog::UriPattern;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    if let Ok(pattern) = UriPattern::parse(template) {
        if let Some(vars) = pattern.matches(uri) {
            // A match binds non-empty values without a slash.
            assert!(vars.values().all(|v| !v.is_empty() && !v.contains('/')));
        }
    }
});
