//! What a client can ask of a server, typed: discovery, the lists (every
//! page collected), tool calls with serde arguments and results, reads,
//! prompts, completion.

use mcp_protocol::header_params::header_params;
use mcp_protocol::model::completion::{Completion, CompletionArgument, CompletionRef};
use mcp_protocol::model::prompts::{GetPromptResult, Prompt};
use mcp_protocol::model::resources::{Resource, ResourceTemplate};
use mcp_protocol::model::tools::{CallToolResult, Tool};
use mcp_protocol::model::{CacheScope, JsonObject, ResourceContents};
use mcp_protocol::params::Params;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::error::{decode, decode_raw, lenient, ClientError};
use super::options::RequestOptions;
use super::started::Started;
use super::{Client, ServerInfo};
use mcp_protocol::client::Spoken;
use mcp_protocol::request::method;

impl Client {
    /// Any request, by method and params (an object); input rounds are
    /// answered by the handlers.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with(method, params, RequestOptions::default()).await
    }

    /// Any request, with progress and log callbacks and its own time limit
    /// (a task it becomes is followed to its end, without that limit).
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        self.request_as(method, params, options).await
    }

    /// Any request, its result read as `T` once, from the text the server
    /// sent (no JSON tree in between), else as [`Client::request_with`].
    pub async fn request_as<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<T, ClientError> {
        match self.inner.request(method, object(params)?, &options).await? {
            Started::Done(result) => decode_raw(method, &result),
            Started::Task(task) => decode(method, self.inner.follow(task).await?),
        }
    }

    /// Any request, its result as the text the server sent (a task it
    /// becomes followed to its end): for a caller that passes it on (a
    /// proxy) or reads it into a type of its own. Its params may carry
    /// members as the text they came in ([`Params::with_raw`]).
    pub async fn request_raw(
        &self,
        method: &str,
        params: impl Into<Params>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        match self.inner.request(method, params, &options).await? {
            Started::Done(result) => Ok(result),
            Started::Task(task) => {
                let result = self.inner.follow(task).await?;
                serde_json::value::to_raw_value(&result).map_err(|e| ClientError::transport(e.to_string()))
            }
        }
    }

    /// Asks the server about itself again (`server/discover`); a legacy
    /// server's answer is what `initialize` said.
    pub async fn discover(&self) -> Result<ServerInfo, ClientError> {
        if let Some(Spoken::Stateless(v)) = self.inner.era() {
            let result = self.request(method::DISCOVER, json!({})).await?;
            super::negotiate::discovered(&result)?;
            *self.inner.server.lock().expect("server lock") = ServerInfo::from_discover(&result, v.as_str());
        }
        Ok(self.server())
    }

    /// Every page of a list method, its items under `key` (from the list
    /// cache when [`ClientOptions::cache_lists`](super::ClientOptions::cache_lists) asked for one).
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let cache = self.inner.options.cache_lists;
        if let Some(items) = self.inner.lists.get(method).filter(|_| cache) {
            return Ok(items);
        }
        let mut items = Vec::new();
        // Each page's ttlMs and cacheScope.
        let mut hints = Vec::new();
        let mut cursor: Option<String> = None;
        let (max_pages, max_items) = (self.inner.options.max_list_pages, self.inner.options.max_list_items);
        for _ in 0..max_pages {
            let mut params = JsonObject::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), c.into());
            }
            let mut page: Page = self.typed(method, params).await?;
            hints.push((page.ttl_ms, page.cache_scope));
            if let Some(listed) = page.rest.remove(key) {
                let listed: Vec<Value> = decode(method, listed)?;
                if items.len() + listed.len() > max_items {
                    return Err(ClientError::transport(format!(
                        "{method} listed more than {max_items} items (max_list_items); given up"
                    )));
                }
                items.extend(listed);
            }
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => {
                    self.inner.lists.note_hints(method, &hints);
                    if cache {
                        self.inner.lists.put(method, &hints, &items);
                    }
                    return Ok(items);
                }
            }
        }
        Err(ClientError::transport(format!("{method} returned more than {max_pages} pages (max_list_pages); given up")))
    }

    /// A request whose result is read as `T`.
    async fn typed<T: DeserializeOwned>(&self, method: &str, params: JsonObject) -> Result<T, ClientError> {
        self.request_as(method, params.into(), RequestOptions::default()).await
    }

    /// The caching hints (`ttlMs`, `cacheScope`) of the last complete
    /// listing of `method` (`tools/list`, …): the shortest `ttlMs` of its
    /// pages and the narrowest scope; `None` before one, or when the server
    /// gave none (a legacy server).
    pub fn list_hints(&self, method: &str) -> Option<mcp_protocol::model::CacheHints> {
        self.inner.lists.hints(method)
    }

    /// Every tool. A tool whose `x-mcp-header` annotations are invalid is
    /// left out (it could not be called correctly); the others' annotations
    /// are remembered for the headers of their calls.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = Vec::new();
        for raw in self.list_all(method::TOOLS_LIST, "tools").await? {
            let tool: Tool = decode(method::TOOLS_LIST, raw)?;
            let Ok(params) = header_params(&tool.input_schema) else { continue };
            self.inner.tool_headers.lock().expect("headers lock").insert(tool.name.clone(), params.into());
            tools.push(tool);
        }
        Ok(tools)
    }

    /// Every item of a list method, read as `T`.
    async fn list_of<T: DeserializeOwned>(&self, method: &str, key: &str) -> Result<Vec<T>, ClientError> {
        self.list_all(method, key).await?.into_iter().map(|item| decode(method, item)).collect()
    }

    /// Every resource.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_of(method::RESOURCES_LIST, "resources").await
    }

    /// Every resource template.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_of(method::RESOURCES_TEMPLATES_LIST, "resourceTemplates").await
    }

    /// Every prompt.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_of(method::PROMPTS_LIST, "prompts").await
    }

    /// Calls a tool; a result with `isError` is [`ClientError::Tool`].
    pub async fn call_tool(&self, name: &str, arguments: impl Serialize) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::default()).await
    }

    /// Calls a tool with progress and log callbacks.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::Input(format!("the arguments of {name} do not serialize: {e}")))?;
        let params = json!({ "name": name, "arguments": arguments });
        let result: CallToolResult = self.request_as(method::TOOLS_CALL, params, options).await?;
        if result.is_error == Some(true) {
            return Err(ClientError::Tool(result));
        }
        Ok(result)
    }

    /// Calls a tool and reads its result as `T`: the structured content,
    /// else the first text block as JSON, else that text as a string.
    pub async fn call<T: DeserializeOwned>(&self, name: &str, arguments: impl Serialize) -> Result<T, ClientError> {
        let result = self.call_tool(name, arguments).await?;
        let value = match (result.structured_content, result.content.first()) {
            (Some(v), _) => v,
            (None, Some(mcp_protocol::model::Content::Text { text, .. })) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            (None, _) => Value::Null,
        };
        decode(name, value)
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ClientError> {
        let params = JsonObject::from_iter([("uri".to_owned(), uri.into())]);
        let read: Read = self.typed(method::RESOURCES_READ, params).await?;
        Ok(read.contents)
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(&self, name: &str, arguments: impl Serialize) -> Result<GetPromptResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::Input(format!("the arguments of {name} do not serialize: {e}")))?;
        let params = JsonObject::from_iter([("name".to_owned(), name.into()), ("arguments".to_owned(), arguments)]);
        self.typed(method::PROMPTS_GET, params).await
    }

    /// Completes an argument of a prompt ([`CompletionRef::Prompt`]) or a
    /// resource template ([`CompletionRef::Resource`]).
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        let argument = CompletionArgument { name: argument.to_owned(), value: value.to_owned() };
        let params = json!({ "ref": reference, "argument": argument });
        let completed: Completed =
            self.request_as(method::COMPLETION_COMPLETE, params, RequestOptions::default()).await?;
        Ok(completed.completion)
    }
}

/// One page of a listing: its cursor and caching hints, its items under
/// the method's key among the rest.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    #[serde(default)]
    next_cursor: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    ttl_ms: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    cache_scope: Option<CacheScope>,
    #[serde(flatten)]
    rest: JsonObject,
}

/// The result of `resources/read`.
#[derive(Deserialize)]
struct Read {
    contents: Vec<ResourceContents>,
}

/// The result of `completion/complete`.
#[derive(Deserialize)]
struct Completed {
    completion: Completion,
}

/// Request params as a caller gives them: an object (`null` reads as `{}`).
pub(super) fn object(v: Value) -> Result<JsonObject, ClientError> {
    match v {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(JsonObject::new()),
        other => Err(ClientError::Input(format!("params must be a JSON object, not {other}"))),
    }
}
