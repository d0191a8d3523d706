"""Test-client checks of a backend through the `command:` check, in the backend preset's sandbox (scripted model,
real Docker): pytest with Flask's test client and with FastAPI's TestClient, supertest under `node --test`, and
`go test` with net/http/httptest. The tests are hidden files of the check; the reply writes only the service."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.helpers import toolchains_image

pytestmark = pytest.mark.docker

FLASK = '''```python
# filename: app.py
from flask import Flask, jsonify, request

app = Flask(__name__)


@app.post("/sum")
def total():
    numbers = (request.get_json(silent=True) or {}).get("numbers")
    if not isinstance(numbers, list):
        return jsonify(error="numbers must be a list"), 400
    return jsonify(sum=sum(numbers))
```'''
FLASK_TEST = '''from app import app


def test_sum():
    client = app.test_client()
    assert client.post("/sum", json={"numbers": [1, 2, 3]}).get_json() == {"sum": 6}
    assert client.post("/sum", json={"numbers": "x"}).status_code == 400
'''
FASTAPI = '''```python
# filename: main.py
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    price: float


@app.post("/items", status_code=201)
def create(item: Item):
    return {"name": item.name, "price": item.price}
```'''
FASTAPI_TEST = '''from fastapi.testclient import TestClient

from main import app

client = TestClient(app)


def test_create():
    assert client.post("/items", json={"name": "tea", "price": 2.5}).status_code == 201
    assert client.post("/items", json={"name": "tea"}).status_code == 422
'''
EXPRESS = '''```javascript
// filename: app.js
const express = require('express');
const app = express();
app.use(express.json());
app.get('/greet/:name', (req, res) => res.json({greeting: `hello ${req.params.name}`}));
module.exports = app;
```'''
EXPRESS_TEST = '''const test = require('node:test');
const assert = require('node:assert');
const request = require('supertest');
const app = require('./app');

test('greets by name', async () => {
  const res = await request(app).get('/greet/ann');
  assert.strictEqual(res.status, 200);
  assert.deepStrictEqual(res.body, {greeting: 'hello ann'});
});
'''
GO = '''```go
// filename: go.mod
module shop

go 1.24
```
```go
// filename: handler.go
package shop

import (
	"encoding/json"
	"net/http"
)

func Health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
}
```'''
GO_TEST = '''package shop

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealth(t *testing.T) {
	rec := httptest.NewRecorder()
	Health(rec, httptest.NewRequest("GET", "/health", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"ok"`) {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
}
'''


@pytest.mark.parametrize("reply, test_name, test_text, command", [
    (FLASK, "test_app.py", FLASK_TEST, "python3 -m pytest -q -p no:cacheprovider test_app.py"),
    (FASTAPI, "test_main.py", FASTAPI_TEST, "python3 -m pytest -q -p no:cacheprovider test_main.py"),
    (EXPRESS, "app.test.js", EXPRESS_TEST, "node --test"),
    (GO, "handler_test.go", GO_TEST, "go test ./..."),
], ids=["flask-test-client", "fastapi-testclient", "express-supertest", "go-httptest"])
def test_a_test_client_check_passes_a_right_service_and_fails_a_broken_one(reply, test_name, test_text, command,
                                                                           scenario_file, workspaces, tmp_path: Path):
    image = toolchains_image()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / test_name).write_text(test_text)
    broken = reply.replace("sum(numbers)", "sum(numbers) + 1").replace("status_code=201", "status_code=200") \
        .replace("hello ${", "hi ${").replace('"ok"}', '"down"}')
    assert broken != reply
    check = {"command": command, "files": {test_name: f"hidden/{test_name}"}}
    path = scenario_file([broken, reply], sandbox={"image": image, "preset": "backend", "timeout": 60},
                         checks=[check])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    first, second = [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "execution"]
    assert first["outcome"]["checks"][0]["passed"] is False and "hidden tests" in first["content"]
    assert second["outcome"]["checks"][0]["passed"] is True
