//! Skill names and skill paths, as the Agent Skills specification and the
//! extension's URI mapping constrain them.

use super::{SCHEME, SKILL_FILE};

/// Checks a skill name: 1–64 characters of lowercase ASCII letters, digits
/// and hyphens, with no leading, trailing or consecutive hyphen.
pub fn check_name(name: &str) -> Result<(), String> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if fits {
        Ok(())
    } else {
        Err(format!(
            "skill name {name:?} must be 1-64 lowercase letters, digits and single hyphens, \
             not starting or ending with a hyphen"
        ))
    }
}

/// Checks a skill path (`acme/billing/refunds`): `/`-separated segments,
/// each a URI reg-name of unreserved characters (the first one is the URI's
/// authority) and none `.` or `..`, the last one a valid skill name.
pub fn check_skill_path(path: &str) -> Result<(), String> {
    let segments: Vec<&str> = path.split('/').collect();
    for s in &segments {
        let unreserved = s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
        if s.is_empty() || *s == "." || *s == ".." || !unreserved {
            return Err(format!(
                "skill path {path:?}: segment {s:?} must be non-empty letters, digits, '-', '.', '_' or '~'"
            ));
        }
    }
    check_name(segments.last().copied().unwrap_or_default())
}

/// The URI of the `SKILL.md` of the skill at `path`.
pub fn skill_md_uri(path: &str) -> String {
    format!("{SCHEME}{path}/{SKILL_FILE}")
}

/// The URI of the root directory of the skill at `path` (no trailing slash).
pub fn skill_root_uri(path: &str) -> String {
    format!("{SCHEME}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for ok in ["pdf", "pdf-processing", "a1", "x"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "PDF", "-pdf", "pdf-", "pdf--x", "pdf_x", "pdf x", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_are_reg_names_ending_in_a_name() {
        assert!(check_skill_path("refunds").is_ok());
        assert!(check_skill_path("acme.example/billing/refunds").is_ok());
        assert!(check_skill_path("acme//refunds").is_err());
        assert!(check_skill_path("../refunds").is_err());
        assert!(check_skill_path("acme/Refunds").is_err());
        assert!(check_skill_path("ac me/refunds").is_err());
        assert_eq!(skill_md_uri("acme/refunds"), "skill://acme/refunds/SKILL.md");
        assert_eq!(skill_root_uri("acme/refunds"), "skill://acme/refunds");
    }
}
