//! The catalog's skills (the Skills extension): each skill's files are
//! resources at `skill://<skill-path>/<file-path>`, and the directories
//! among those URIs answer `resources/directory/read`.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use futures::future::FutureExt;
use mcp_protocol::model::content::ResourceContents;
use mcp_protocol::model::resources;
use mcp_protocol::pagination::{decode_cursor, encode_cursor, Page};
use mcp_protocol::skills::{self as ext, SkillEntry};
use mcp_protocol::subscription::Event;
use mcp_protocol::ProtocolError;

use super::skill::{Body, Skill, SkillFile};
use super::{Catalog, CatalogError, Listing, Resource};

/// The contents of a file read: text when it is UTF-8, else a base64 blob.
fn contents(uri: String, mime: String, bytes: Vec<u8>) -> ResourceContents {
    match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(uri, mime, text),
        Err(e) => ResourceContents::blob(uri, mime, base64::engine::general_purpose::STANDARD.encode(e.into_bytes())),
    }
}

/// The resource of one file of `skill`: a `SKILL.md` carries the skill's
/// `name` and `description`; every file its MIME type and size.
fn file_resource(skill: &Skill, file: &SkillFile) -> Resource {
    let body = file.body.clone();
    let mime = file.mime_type.clone();
    let read = move |uri: String, _ctx| {
        let bytes = match &body {
            Body::Bytes(b) => Ok(b.to_vec()),
            Body::Reader(read) => read(),
        };
        let mime = mime.clone();
        async move { Ok(vec![contents(uri, mime, bytes?)]) }.boxed_local()
    };
    let is_manifest = file.path == ext::SKILL_FILE;
    let name = match skill.frontmatter.get("name").and_then(|v| v.as_str()) {
        Some(name) if is_manifest => name.to_owned(),
        _ => file.path.clone(),
    };
    let mut r = Resource::new(skill.file_uri(file), name, read).with_mime_type(file.mime_type.clone());
    r = r.with_size(file.size);
    if is_manifest && let Some(d) = skill.frontmatter.get("description").and_then(|v| v.as_str()) {
        r = r.with_description(d);
    }
    r.scopes = skill.scopes.clone();
    r
}

/// The digest of each file URI of a skill.
fn digests(skill: &Skill) -> BTreeMap<String, String> {
    skill.files.iter().map(|f| (skill.file_uri(f), f.digest.clone())).collect()
}

impl Catalog {
    /// Adds a skill: its files become resources and the server declares the
    /// Skills extension. Refused when a skill with that URI is already there
    /// (use [`Catalog::replace_skill`]).
    pub fn add_skill(&self, skill: Skill) -> Result<(), CatalogError> {
        self.put_skill(skill, true).map(drop)
    }

    /// Adds a skill or replaces the one with the same URI (returned). Files
    /// gone are removed and new ones added (`resources/list_changed`); a
    /// file whose digest changed publishes `resources/updated`.
    pub fn replace_skill(&self, skill: Skill) -> Option<Arc<Skill>> {
        self.put_skill(skill, false).unwrap_or_default()
    }

    /// Adds a skill, or (unless `only_new`) replaces the one with its URI;
    /// the check and the change in one draft, so that two adds of one URI
    /// cannot both succeed.
    fn put_skill(&self, mut skill: Skill, only_new: bool) -> Result<Option<Arc<Skill>>, CatalogError> {
        let new = digests(&skill);
        let (old, changed) = {
            let mut state = self.write();
            if only_new && state.skills.contains_key(&skill.uri()) {
                return Err(CatalogError(format!(
                    "a skill {:?} is already there (replace_skill replaces it)",
                    skill.uri()
                )));
            }
            self.note_scopes(&skill.scopes);
            state.serves_skills = true;
            let old = state.skills.get(&skill.uri()).cloned();
            let before = old.as_deref().map(digests).unwrap_or_default();
            for uri in before.keys().filter(|u| !new.contains_key(*u)) {
                state.resources.remove(uri);
            }
            for file in &skill.files {
                state.put_resource(file_resource(&skill, file));
            }
            // The scopes configuration gave the SKILL.md are the skill's.
            if let Some(r) = state.resources.get(&skill.uri()) {
                skill.scopes = r.scopes.clone();
            }
            state.skills.insert(skill.uri(), Arc::new(skill));
            let changed: Vec<(String, String)> = new
                .iter()
                .filter(|(u, d)| before.get(*u).is_some_and(|b| b != *d))
                .map(|(u, d)| (u.clone(), d.clone()))
                .collect();
            let listed_changed = before.keys().ne(new.keys());
            (old, (listed_changed, changed))
        };
        let (listed_changed, updated) = changed;
        if listed_changed {
            self.emit(Event::ResourcesListChanged);
        }
        for (uri, digest) in updated {
            // The digest identifies the observation: instances serving the
            // same files publish one change once.
            self.emit_keyed(Event::ResourceUpdated { uri }, Some(&digest));
        }
        Ok(old)
    }

    /// Removes a skill and its files' resources.
    pub fn remove_skill(&self, uri: &str) -> Option<Arc<Skill>> {
        let old = {
            let mut state = self.write();
            let old = state.skills.remove(uri)?;
            for f in digests(&old).keys() {
                state.resources.remove(f);
            }
            old
        };
        self.emit(Event::ResourcesListChanged);
        Some(old)
    }

    /// Declares the Skills extension even while no skill is served (a
    /// watched skills directory that is still empty).
    pub fn serve_skills(&self) {
        self.write().serves_skills = true;
    }

    /// Whether the server declares the Skills extension: a skill was added,
    /// or [`Catalog::serve_skills`] was called.
    pub fn serves_skills(&self) -> bool {
        self.read().serves_skills
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub fn skill(&self, uri: &str) -> Option<Arc<Skill>> {
        self.read().skills.get(uri).cloned()
    }

    /// The URIs of the skills served, in order.
    pub fn skill_uris(&self) -> Vec<String> {
        self.read().skills.keys().cloned().collect()
    }

    /// A page of the skills whose scopes pass `visible`, as entries (one
    /// entry is never split across pages).
    pub fn list_skills_for(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        visible: &dyn Fn(&[String]) -> bool,
    ) -> Result<Listing<SkillEntry>, ProtocolError> {
        let state = self.read();
        let page = super::listing::page_of(&state.skills, cursor, page_size, |s| visible(&s.scopes), |s| s, |_| None)?;
        let items = page.page.items.iter().map(|s| s.entry()).collect();
        Ok(Listing { page: Page { items, next_cursor: page.page.next_cursor }, cache: None })
    }

    /// A page of the direct children of the directory `uri` among the
    /// served `skill://` resources that pass `visible`: files with their
    /// metadata, subdirectories as `inode/directory` resources. `-32602` when
    /// `uri` is not such a directory.
    pub fn read_directory_for(
        &self,
        uri: &str,
        cursor: Option<&str>,
        page_size: usize,
        visible: &dyn Fn(&[String]) -> bool,
    ) -> Result<Page<resources::Resource>, ProtocolError> {
        let not_a_directory = || ProtocolError::InvalidParams(format!("{uri} is not a directory this server serves"));
        if !uri.starts_with(ext::SCHEME) || uri.ends_with('/') {
            return Err(not_a_directory());
        }
        let prefix = format!("{uri}/");
        let state = self.read();
        let mut children: BTreeMap<String, Option<resources::Resource>> = BTreeMap::new();
        let under = state.resources.range(prefix.clone()..).take_while(|(k, _)| k.starts_with(&prefix));
        for (key, r) in under.filter(|(_, r)| r.listed && visible(&r.scopes)) {
            match key[prefix.len()..].split_once('/') {
                None => {
                    children.insert(key.clone(), Some(r.def.clone()));
                }
                Some((dir, _)) => {
                    children.entry(format!("{prefix}{dir}")).or_insert(None);
                }
            }
        }
        if children.is_empty() {
            return Err(not_a_directory());
        }
        let after = cursor.map(decode_cursor).transpose()?;
        let mut rest = children.into_iter().filter(|(k, _)| after.as_ref().is_none_or(|a| k > a)).peekable();
        let mut items = Vec::new();
        let mut last = None;
        while items.len() < page_size.max(1) {
            let Some((key, def)) = rest.next() else { break };
            items.push(def.unwrap_or_else(|| directory(&key)));
            last = Some(key);
        }
        let next_cursor = rest.peek().and(last).map(|k| encode_cursor(&k));
        Ok(Page { items, next_cursor })
    }
}

/// The directory resource at `uri`.
fn directory(uri: &str) -> resources::Resource {
    resources::Resource {
        uri: uri.to_owned(),
        name: uri.rsplit('/').next().unwrap_or(uri).to_owned(),
        title: None,
        description: None,
        mime_type: Some(ext::DIRECTORY_MIME.to_owned()),
        size: None,
        annotations: None,
        meta: None,
    }
}

/// The set of file URIs of the skills in `catalog` (tests).
#[cfg(test)]
fn file_uris(catalog: &Catalog) -> std::collections::BTreeSet<String> {
    catalog.read().resources.keys().filter(|k| k.starts_with(ext::SCHEME)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "---\nname: report\ndescription: Writes reports\n---\nBody\n";
    const NESTED: &str = "---\nname: draft\ndescription: Drafts\n---\n";

    fn report(extra: &str) -> Skill {
        Skill::from_files(
            "acme/report",
            [
                ("SKILL.md", MD.to_owned()),
                ("ref/a.txt", extra.to_owned()),
                ("ref/deep/b.txt", "b".to_owned()),
                ("draft/SKILL.md", NESTED.to_owned()),
            ],
        )
        .unwrap()
    }

    #[test]
    fn skill_files_are_resources_and_the_manifest_carries_the_frontmatter() {
        let c = Catalog::new();
        assert!(!c.serves_skills());
        c.add_skill(report("a")).unwrap();
        assert!(c.serves_skills());
        assert_eq!(file_uris(&c).len(), 4);
        let md = c.resource("skill://acme/report/SKILL.md").unwrap();
        assert_eq!(md.def.name, "report");
        assert_eq!(md.def.description.as_deref(), Some("Writes reports"));
        assert_eq!(md.def.mime_type.as_deref(), Some("text/markdown"));
        assert!(c.add_skill(report("a")).is_err());
    }

    #[test]
    fn directories_list_direct_children_and_page() {
        let c = Catalog::new();
        c.add_skill(report("a")).unwrap();
        let all = |_: &[String]| true;
        let top = c.read_directory_for("skill://acme", None, 10, &all).unwrap();
        assert_eq!(top.items.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["skill://acme/report"]);
        assert_eq!(top.items[0].mime_type.as_deref(), Some("inode/directory"));
        let root = c.read_directory_for("skill://acme/report", None, 10, &all).unwrap();
        let uris: Vec<_> = root.items.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["skill://acme/report/SKILL.md", "skill://acme/report/draft", "skill://acme/report/ref"]);
        let first = c.read_directory_for("skill://acme/report", None, 2, &all).unwrap();
        assert_eq!(first.items.len(), 2);
        let cursor = first.next_cursor.unwrap();
        let second = c.read_directory_for("skill://acme/report", Some(&cursor), 2, &all).unwrap();
        assert_eq!(second.items[0].uri, "skill://acme/report/ref");
        assert!(second.next_cursor.is_none());
        for bad in ["skill://acme/report/SKILL.md", "skill://nope", "file:///etc", "skill://acme/"] {
            assert!(matches!(c.read_directory_for(bad, None, 10, &all), Err(ProtocolError::InvalidParams(_))), "{bad}");
        }
    }

    #[test]
    fn a_replaced_skill_publishes_what_changed() {
        let c = Catalog::new();
        let events = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = events.clone();
        c.watch(move |e, _| seen.lock().unwrap().push(e.clone()));
        c.add_skill(report("a")).unwrap();
        events.lock().unwrap().clear();
        let old = c.replace_skill(report("changed")).unwrap();
        let entry = c.skill("skill://acme/report/SKILL.md").unwrap().entry();
        assert_ne!(old.entry().resources[2].digest, entry.resources[2].digest);
        assert_eq!(*events.lock().unwrap(), [Event::ResourceUpdated { uri: "skill://acme/report/ref/a.txt".into() }]);
        events.lock().unwrap().clear();
        c.remove_skill("skill://acme/report/SKILL.md").unwrap();
        assert!(file_uris(&c).is_empty());
        assert_eq!(*events.lock().unwrap(), [Event::ResourcesListChanged]);
    }

    #[test]
    fn skills_list_in_pages_of_whole_entries() {
        let c = Catalog::new();
        c.add_skill(report("a")).unwrap();
        let other = "---\nname: other\ndescription: Other\n---\n";
        c.add_skill(Skill::from_files("other", [("SKILL.md", other)]).unwrap()).unwrap();
        let first = c.list_skills_for(None, 1, &|_| true).unwrap();
        assert_eq!(first.page.items[0].uri, "skill://acme/report/SKILL.md");
        assert_eq!(first.page.items[0].resources.len(), 4);
        let next = c.list_skills_for(first.page.next_cursor.as_deref(), 1, &|_| true).unwrap();
        assert_eq!(next.page.items[0].uri, "skill://other/SKILL.md");
        assert!(next.page.next_cursor.is_none());
        let hidden = c.list_skills_for(None, 10, &|_| false).unwrap();
        assert!(hidden.page.items.is_empty());
    }
}
