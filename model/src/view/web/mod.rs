//! The Explorer served by `rebalance-model explore`: pages of our own, rendered on the server
//! from the model, in front of no one else's UI.
//!
//! Why not Stateright's Explorer page: its state panel marks a property on a state only when
//! its own search's discovery path is a prefix of the state's path, and that search is not the
//! one `check` runs, so on the counterexample `check` prints the global panel said
//! "Counterexample found" while the state panel said "Safety holds" (measured in session 12,
//! see docs/model.md). Here every mark on a state is the property evaluated on that state and
//! on the path to it ([`path::marks`]), and the global verdicts are `check`'s own
//! ([`verdicts`]), so the two cannot disagree. Stateright's page is still served by
//! `explore --ui stateright`.
//!
//! Routes: `/steps/0/I/J...` a path ([`page::path_page`]); `/` the initial state, which also
//! sends the old `#/steps/...` addresses to their path; `GET /check` the verdicts, `POST
//! /check` starts the check; `/explorer.css`.

pub mod diff;
pub mod page;
pub mod path;
pub mod verdicts;

use crate::step::model::RebalanceModel;
use verdicts::Verdicts;

const CSS: &str = include_str!("explorer.css");

/// An answer to one request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    /// Where a redirect goes.
    pub location: Option<String>,
}

impl Reply {
    fn html(status: u16, body: String) -> Reply {
        Reply {
            status,
            content_type: "text/html; charset=utf-8",
            body,
            location: None,
        }
    }
}

/// The Explorer of one model: its title (the configuration and switches) and its check.
pub struct Explorer {
    pub model: RebalanceModel,
    pub title: String,
    pub verdicts: Verdicts,
}

/// Old addresses, `/#/steps/0/3/1` (Stateright's route, which `check` printed before), are
/// sent to `/steps/0/3/1`; the fragment never reaches the server, so the page does it.
const HASH_ROUTE: &str = "<script>if (location.hash.startsWith('#/steps/')) \
                          location.replace(location.hash.slice(1));</script>";

impl Explorer {
    pub fn new(model: RebalanceModel, title: String, threads: usize) -> Explorer {
        Explorer {
            model,
            title,
            verdicts: Verdicts::new(threads),
        }
    }

    /// The answer to `method url`; pure but for starting the check.
    pub fn respond(&self, post: bool, url: &str) -> Reply {
        let route = url.split(['?', '#']).next().unwrap_or("");
        match (post, route) {
            (false, "/explorer.css") => Reply {
                status: 200,
                content_type: "text/css; charset=utf-8",
                body: CSS.to_string(),
                location: None,
            },
            (false, "/") => {
                let mut reply = self.path(&[]);
                reply.body = reply
                    .body
                    .replace("</body>", &format!("{HASH_ROUTE}</body>"));
                reply
            }
            (false, "/check") => {
                Reply::html(200, page::check_page(&self.title, &self.verdicts.status()))
            }
            (true, "/check") => {
                self.verdicts.start(&self.model);
                Reply {
                    status: 303,
                    content_type: "text/plain; charset=utf-8",
                    body: "the check is running; see /check\n".into(),
                    location: Some("/check".into()),
                }
            }
            (false, r) if r == "/steps" || r.starts_with("/steps/") => {
                match path::parse(&r["/steps".len()..]) {
                    Ok(indices) => self.path(&indices),
                    Err(e) => Reply::html(400, page::error_page(&self.title, &e)),
                }
            }
            _ => Reply::html(
                404,
                page::error_page(
                    &self.title,
                    &format!("no page at {route}: paths are /steps/0/I/J/..., verdicts /check"),
                ),
            ),
        }
    }

    fn path(&self, indices: &[usize]) -> Reply {
        match path::walk(&self.model, indices) {
            Ok(w) => Reply::html(
                200,
                page::path_page(&self.model, &self.title, &w, &self.verdicts.status()),
            ),
            Err(e) => Reply::html(404, page::error_page(&self.title, &e)),
        }
    }

    /// Serves until the process ends. Binding is the caller's to check first (an address in
    /// use is a usage error there).
    pub fn serve(&self, addr: &str) -> Result<(), String> {
        let server = tiny_http::Server::http(addr).map_err(|e| format!("--addr {addr}: {e}"))?;
        for request in server.incoming_requests() {
            let post = *request.method() == tiny_http::Method::Post;
            let reply = self.respond(post, request.url());
            let mut response = tiny_http::Response::from_string(reply.body)
                .with_status_code(reply.status)
                .with_header(header("Content-Type", reply.content_type));
            if let Some(to) = &reply.location {
                response = response.with_header(header("Location", to));
            }
            // A client that went away is its own business; the server goes on.
            let _ = request.respond(response);
        }
        Ok(())
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
        .expect("header names and values are ASCII")
}
